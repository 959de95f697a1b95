# output_writer: a worker that writes numbered lines fast, for the WorkerOutput process tests.
add_executable(output_writer ${CMAKE_CURRENT_LIST_DIR}/output_writer.cpp)
add_dependencies(launcher_tests output_writer)
target_compile_definitions(launcher_tests PRIVATE
  CPPLAUNCH_OUTPUT_WRITER="$<TARGET_FILE:output_writer>")
