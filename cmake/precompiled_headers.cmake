# A precompiled <catch2/catch.hpp> for the unit-test binaries: parsed once per build tree instead
# of once per test file (measured: about 1 CPU second saved per test file, 107 files in the
# sanitized tree). Compiled once by a small owner target, cpplaunch_pch_catch, and reused by the
# test binaries (cpplaunch_precompile_catch). catch_main defines CATCH_CONFIG_MAIN before it
# includes Catch2, so it never takes the header. The compiler checks each use (-Winvalid-pch: a
# header built with other options is not used, and says so); the test files still include
# Catch2 themselves, so -DCPPLAUNCH_PCH=OFF builds the same tests the slow way. scripts/tidy checks
# only the project's own sources, which take no precompiled header (clang-tidy cannot read GCC's).
# Not precompiled: the Asio headers. Loading their precompiled form (140 MB) cost about as much
# as parsing them, so no target built faster with it.
# With ccache, a compile that uses a precompiled header is cached only with sloppiness
# pch_defines,time_macros: they are added to the user's own settings for this build's compiles.
option(CPPLAUNCH_PCH "Precompile <catch2/catch.hpp> for the unit-test binaries" ON)

# cpplaunch_precompile_catch(<target>...): the targets (those that exist) reuse the header.
function(cpplaunch_precompile_catch)
  if(NOT CPPLAUNCH_PCH)
    return()
  endif()
  if(NOT TARGET cpplaunch_pch_catch)
    set(source ${CMAKE_BINARY_DIR}/pch/catch.cpp)
    if(NOT EXISTS ${source})
      file(WRITE ${source} "// Owns the precompiled Catch2 (cmake/precompiled_headers.cmake).\n")
    endif()
    add_library(cpplaunch_pch_catch OBJECT ${source})
    target_precompile_headers(cpplaunch_pch_catch PRIVATE <catch2/catch.hpp>)
    target_link_libraries(cpplaunch_pch_catch PRIVATE Catch2::Catch2)
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      target_precompile_headers(${target} REUSE_FROM cpplaunch_pch_catch)
    endif()
  endforeach()
endfunction()

if(CPPLAUNCH_PCH AND CMAKE_CXX_COMPILER_LAUNCHER)
  list(GET CMAKE_CXX_COMPILER_LAUNCHER 0 cpplaunch_launcher)
  get_filename_component(cpplaunch_launcher_name ${cpplaunch_launcher} NAME)
  if(cpplaunch_launcher_name STREQUAL "ccache")
    execute_process(COMMAND ${cpplaunch_launcher} --get-config sloppiness
      OUTPUT_VARIABLE cpplaunch_sloppiness OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE " " "" cpplaunch_sloppiness "${cpplaunch_sloppiness}")
    foreach(setting pch_defines time_macros)
      if(NOT cpplaunch_sloppiness MATCHES "(^|,)${setting}(,|$)")
        string(APPEND cpplaunch_sloppiness ",${setting}")
      endif()
    endforeach()
    string(REGEX REPLACE "^," "" cpplaunch_sloppiness "${cpplaunch_sloppiness}")
    set(CMAKE_CXX_COMPILER_LAUNCHER env CCACHE_SLOPPINESS=${cpplaunch_sloppiness}
        ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
endif()
