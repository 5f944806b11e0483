// Internal to sim/: the Perfetto protobuf encoder of the trace exporter (sim/chrome_trace.h,
// WriteChromeTrace with TraceFormat::kPerfetto). The schema is sim/perfetto_trace.proto, a subset
// of Perfetto's trace format with Perfetto's field numbers.
//
// What it writes, on one packet sequence (trusted_packet_sequence_id 1):
//   - a track descriptor per process (chip / cluster: uuid = pid), thread (unit lane: uuid = tid,
//     a ThreadDescriptor with the pid) and counter track (uuid from the exporter, parent = its
//     process, name "chip0.hbm util %" / "chip0.hbm GB/s"), and a track "meshsim run";
//   - per slice a SLICE_BEGIN and a SLICE_END packet on its thread's track; the begin carries the
//     interned name ("allgather · sync") and categories (op kind, phase), the arguments as debug
//     annotations with interned names, and the arrows: flow_ids on the source slice,
//     terminating_flow_ids on the destination;
//   - a COUNTER packet per counter sample (double_counter_value);
//   - an INSTANT "meshsim run" at time 0 whose debug annotations are the run facts.
// Interned entries are sent in the packet that first uses them (sequence flags say so). Packets
// are length-delimited field 1 of `Trace`, written one by one through a 1 MiB buffer.
#ifndef MESHSIM_FORMATS_PERFETTO_TRACE_H_
#define MESHSIM_FORMATS_PERFETTO_TRACE_H_

#include <cstdio>
#include <memory>

#include "formats/trace_encoder.h"

namespace meshsim::formats {

// An encoder writing a Perfetto trace to `file` (not owned; the caller closes it).
std::unique_ptr<TraceEncoder> MakePerfettoEncoder(FILE* file);

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_PERFETTO_TRACE_H_
