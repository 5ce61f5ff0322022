include(GoogleTest)

# Every GoogleTest case is its own CTest test, so a failure names its case and a hung case is
# killed alone. 120 s is far above any unit case (the slowest take a few seconds on two busy
# cores); integration tests that need longer set their own TIMEOUT property.
set(ROLTER_TEST_TIMEOUT 120 CACHE STRING "CTest TIMEOUT of each GoogleTest case, in seconds")

# Test and benchmark executables are linked without their debug information (about 20 MB each,
# 2 GB over the plain build), unless ROLTER_TEST_DEBUG_INFO is on. The sanitized build keeps it, so
# its reports name files and lines. rolter, rolter-sim and rolter-bench always keep theirs.
option(ROLTER_TEST_DEBUG_INFO "Keep debug information in test and benchmark executables" OFF)
function(rolter_strip_debug_info name)
  if(NOT ROLTER_TEST_DEBUG_INFO AND NOT ROLTER_SANITIZE AND NOT ROLTER_FUZZ)
    target_link_options(${name} PRIVATE -Wl,--strip-debug)
  endif()
endfunction()

# rolter_test(NAME SOURCES... [LIBS libs...]): one GoogleTest executable; its cases are registered
# with CTest one by one, as NAME.Suite.Case, each with ROLTER_TEST_TIMEOUT.
function(rolter_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT ROLTER_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  rolter_strip_debug_info(${name})
  # Discovery runs the binary with --gtest_list_tests after each link; a loaded two-core machine
  # can take far longer than the 5 s default to start a binary that links Beast and OpenSSL.
  gtest_discover_tests(${name}
    TEST_PREFIX "${name}."
    DISCOVERY_TIMEOUT 120
    PROPERTIES TIMEOUT ${ROLTER_TEST_TIMEOUT})
endfunction()

# rolter_bench(NAME SOURCES... [LIBS libs...]): one Google Benchmark executable (not run by CTest).
function(rolter_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT ROLTER_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark benchmark::benchmark_main)
  rolter_strip_debug_info(${name})
endfunction()

# rolter_fuzz(NAME SOURCES... [LIBS libs...]): a libFuzzer target, built only with -DROLTER_FUZZ=ON
# and clang. Each target keeps its seed corpus in a folder named corpus/<NAME> beside its source.
function(rolter_fuzz name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT ROLTER_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
endfunction()
