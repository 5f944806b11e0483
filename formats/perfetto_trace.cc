#include "formats/perfetto_trace.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/op.h"
#include "core/timeline.h"
#include "formats/perfetto_trace.pb.h"

namespace meshsim::formats {
namespace {

namespace pb = ::meshsim::perfetto;
using core::CollectiveKind;
using core::Phase;
using core::TimelineRow;

constexpr uint32_t kSequence = 1;
constexpr uint8_t kTracePacketTag = (1 << 3) | 2;  // Trace.packet: field 1, length-delimited.

// Interned debug-annotation names, in the order of their iids (1, 2, ...).
enum Arg : uint64_t {
  kOp = 1,
  kBytes,
  kFlops,
  kLayer,
  kPass,
  kSlice,
  kCollective,
  kPhase,
  kStage,
  kMicrobatch
};
constexpr const char* kArgNames[] = {"op",    "bytes",      "flops", "layer", "pass",
                                     "slice", "collective", "phase", "stage", "microbatch"};

// Whole nanoseconds of a time already rounded to them.
uint64_t Nanos(int64_t ps) { return ps <= 0 ? 0 : static_cast<uint64_t>(ps / 1000); }

// Buffers serialized packets and hands full buffers to a FILE*. After the first I/O error it
// stops writing and remembers errno.
class PacketWriter : public BufferedFile {
 public:
  explicit PacketWriter(FILE* file) : BufferedFile(file) {}

  void Write(const pb::TracePacket& packet) {
    const size_t size = packet.ByteSizeLong();
    uint8_t header[16];
    size_t n = 0;
    header[n++] = kTracePacketTag;
    for (uint64_t v = size;; v >>= 7) {
      header[n++] = static_cast<uint8_t>(v < 0x80 ? v : (v & 0x7f) | 0x80);
      if (v < 0x80) break;
    }
    if (n + size > kBufferSize - len_) Flush();
    if (n + size > kBufferSize) {  // A packet bigger than the buffer (a huge fact list).
      WriteOut(header, n);
      const std::string bytes = packet.SerializeAsString();
      WriteOut(bytes.data(), bytes.size());
      return;
    }
    Append(header, n);
    packet.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(buf_.get() + len_));
    len_ += size;
  }
};

class PerfettoEncoder final : public TraceEncoder {
 public:
  explicit PerfettoEncoder(FILE* file) : out_(file) {}

  void Process(int64_t pid, const std::string& name, int64_t) override {
    pb::TrackDescriptor* d = NewPacket()->mutable_track_descriptor();
    d->set_uuid(pid);
    d->mutable_process()->set_pid(static_cast<int32_t>(pid));
    d->mutable_process()->set_process_name(ToValidUtf8(name));
    Emit();
  }

  void Thread(int64_t pid, int64_t tid, const std::string& name, int64_t) override {
    pb::TrackDescriptor* d = NewPacket()->mutable_track_descriptor();
    d->set_uuid(tid);
    d->set_parent_uuid(pid);
    d->mutable_thread()->set_pid(static_cast<int32_t>(pid));
    d->mutable_thread()->set_tid(static_cast<int32_t>(tid));
    d->mutable_thread()->set_thread_name(ToValidUtf8(name));
    Emit();
  }

  void CounterTrack(int64_t track, int64_t pid, const std::string& name,
                    const char* suffix) override {
    pb::TrackDescriptor* d = NewPacket()->mutable_track_descriptor();
    d->set_uuid(track);
    d->set_parent_uuid(pid);
    // JSON's counter "chip0.hbm" with key "util %" shows as "chip0.hbm util %" in Perfetto.
    d->set_name(ToValidUtf8(name) +
                (*suffix != '\0' ? std::string(suffix) : std::string(" util %")));
    d->mutable_counter();
    Emit();
  }

  void Slice(const TraceSlice& s) override {
    if (s.tid != open_tid_) {
      CloseAll();
      open_tid_ = s.tid;
    }
    // Slices come nested (trace_encoder.h); close those that ended at or before this start, as
    // Perfetto closes a complete event when the next one on its track starts at its end.
    while (!open_.empty() && open_.back() <= s.start_ps) CloseTop();

    const TimelineRow& r = *s.row;
    const bool is_phase = r.phase != Phase::kOp;
    pb::TracePacket* p = NewPacket();
    p->set_timestamp(Nanos(s.start_ps));
    p->set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pb::TrackEvent* e = p->mutable_track_event();
    e->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
    e->set_track_uuid(s.tid);
    key_.assign(s.label);
    if (is_phase) {
      key_ += " \xc2\xb7 ";  // " · "
      key_ += core::ToString(r.phase);
    }
    e->set_name_iid(NameIid(key_, p));
    e->add_category_iids(CategoryIid(core::ToString(r.kind), p));
    if (is_phase) e->add_category_iids(CategoryIid(core::ToString(r.phase), p));
    if (r.op.valid()) Annotation(e, kOp)->set_int_value(r.op.value());
    Annotation(e, kBytes)->set_int_value(r.bytes);
    pb::DebugAnnotation* flops = Annotation(e, kFlops);
    if (std::floor(r.flops) == r.flops && std::abs(r.flops) < 9e18) {
      flops->set_int_value(static_cast<int64_t>(r.flops));
    } else {
      flops->set_double_value(r.flops);
    }
    if (r.layer != -1) Annotation(e, kLayer)->set_int_value(r.layer);
    if (r.pass != core::Pass::kNone) Annotation(e, kPass)->set_string_value(core::ToString(r.pass));
    if (r.slice != -1) Annotation(e, kSlice)->set_int_value(r.slice);
    if (r.collective != CollectiveKind::kNone) {
      Annotation(e, kCollective)->set_string_value(core::ToString(r.collective));
    }
    Annotation(e, kPhase)->set_string_value(core::ToString(r.phase));
    if (r.stage != -1) Annotation(e, kStage)->set_int_value(r.stage);
    if (r.microbatch != -1) Annotation(e, kMicrobatch)->set_int_value(r.microbatch);
    for (const SliceFlow& f : s.flows) {
      if (f.source) {
        e->add_flow_ids(static_cast<uint64_t>(f.id));
      } else {
        e->add_terminating_flow_ids(static_cast<uint64_t>(f.id));
      }
    }
    Emit();
    open_.push_back(s.end_ps);
  }

  // Arrows travel with their slices (flow_ids on the begin events).
  void Flow(const TraceFlow&) override { CloseAll(); }

  void Counter(int64_t track, int64_t, const std::string&, const char*, const char*, int64_t ps,
               double value) override {
    CloseAll();
    pb::TracePacket* p = NewPacket();
    p->set_timestamp(Nanos(ps));
    pb::TrackEvent* e = p->mutable_track_event();
    e->set_type(pb::TrackEvent::TYPE_COUNTER);
    e->set_track_uuid(track);
    e->set_double_counter_value(value);
    Emit();
  }

  void Finish(const std::vector<std::pair<std::string, std::string>>& facts,
              int64_t spare_track) override {
    CloseAll();
    pb::TrackDescriptor* d = NewPacket()->mutable_track_descriptor();
    d->set_uuid(spare_track);
    d->set_name("meshsim run");
    Emit();
    pb::TracePacket* p = NewPacket();
    p->set_timestamp(0);
    pb::TrackEvent* e = p->mutable_track_event();
    e->set_type(pb::TrackEvent::TYPE_INSTANT);
    e->set_track_uuid(spare_track);
    e->set_name("meshsim run");
    for (const auto& [key, value] : facts) {
      pb::DebugAnnotation* a = e->add_debug_annotations();
      a->set_name(ToValidUtf8(key));
      a->set_string_value(ToValidUtf8(value));
    }
    Emit();
  }

  bool Flush() override { return out_.Flush(); }
  bool ok() const override { return out_.ok(); }
  int error() const override { return out_.error(); }

 private:
  // The packet to fill, cleared (its allocations are reused).
  pb::TracePacket* NewPacket() {
    packet_.Clear();
    return &packet_;
  }

  // Writes the packet. The first packet of the sequence starts its interned state and interns
  // the annotation names.
  void Emit() {
    packet_.set_trusted_packet_sequence_id(kSequence);
    if (first_) {
      first_ = false;
      packet_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED |
                                 pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      for (uint64_t i = 0; i < std::size(kArgNames); ++i) {
        pb::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
        n->set_iid(i + 1);
        n->set_name(kArgNames[i]);
      }
    }
    out_.Write(packet_);
  }

  static pb::DebugAnnotation* Annotation(pb::TrackEvent* e, Arg arg) {
    pb::DebugAnnotation* a = e->add_debug_annotations();
    a->set_name_iid(arg);
    return a;
  }

  // The iid of event name `name`, interned in packet `p` when new.
  uint64_t NameIid(const std::string& name, pb::TracePacket* p) {
    const auto [it, added] = names_.try_emplace(name, names_.size() + 1);
    if (added) {
      pb::EventName* n = p->mutable_interned_data()->add_event_names();
      n->set_iid(it->second);
      n->set_name(ToValidUtf8(name));
    }
    return it->second;
  }

  uint64_t CategoryIid(const char* category, pb::TracePacket* p) {
    const auto [it, added] = categories_.try_emplace(category, categories_.size() + 1);
    if (added) {
      pb::EventCategory* c = p->mutable_interned_data()->add_event_categories();
      c->set_iid(it->second);
      c->set_name(category);
    }
    return it->second;
  }

  void CloseTop() {
    pb::TracePacket* p = NewPacket();
    p->set_timestamp(Nanos(open_.back()));
    pb::TrackEvent* e = p->mutable_track_event();
    e->set_type(pb::TrackEvent::TYPE_SLICE_END);
    e->set_track_uuid(open_tid_);
    Emit();
    open_.pop_back();
  }

  void CloseAll() {
    while (!open_.empty()) CloseTop();
  }

  PacketWriter out_;
  pb::TracePacket packet_;
  bool first_ = true;
  std::unordered_map<std::string, uint64_t> names_;
  std::unordered_map<std::string, uint64_t> categories_;
  std::string key_;
  int64_t open_tid_ = -1;
  std::vector<int64_t> open_;  // End times (ps) of the open slices of thread open_tid_.
};

}  // namespace

std::unique_ptr<TraceEncoder> MakePerfettoEncoder(FILE* file) {
  return std::make_unique<PerfettoEncoder>(file);
}

}  // namespace meshsim::formats
