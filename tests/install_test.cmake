# Installs the build into a scratch prefix and checks the layout: the binary, the docs and both
# completion scripts, the installed completions equal to what the installed binary prints.
# Usage (ctest runs it as `install_layout`):
#   cmake -DBUILD_DIR=<build> -DPREFIX=<scratch> -P tests/install_test.cmake
foreach(var BUILD_DIR PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}")
endif()
foreach(f bin/meshsim
          share/doc/meshsim/README.md share/doc/meshsim/LICENSE share/doc/meshsim/CITATION.cff
          share/doc/meshsim/cli.md share/doc/meshsim/experiments.md
          share/bash-completion/completions/meshsim share/zsh/site-functions/_meshsim)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()
foreach(shell bash zsh)
  execute_process(COMMAND "${PREFIX}/bin/meshsim" completion ${shell}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE printed)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "installed bin/meshsim completion ${shell} exited ${rc}")
  endif()
  if(shell STREQUAL "bash")
    file(READ "${PREFIX}/share/bash-completion/completions/meshsim" installed)
  else()
    file(READ "${PREFIX}/share/zsh/site-functions/_meshsim" installed)
  endif()
  if(NOT printed STREQUAL installed)
    message(FATAL_ERROR "the installed ${shell} completion differs from `meshsim completion ${shell}`")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}")
message(STATUS "install layout ok")
