# Included by tests/CMakeLists.txt when spmv_distributed is built.
file(GLOB SPMV_DISTRIBUTED_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_executable(spmv_distributed_tests ${SPMV_DISTRIBUTED_TESTS})
target_include_directories(spmv_distributed_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(spmv_distributed_tests PRIVATE spmv_distributed GTest::gtest ZLIB::ZLIB)  # zlib: common/bgzf.hpp
target_compile_definitions(spmv_distributed_tests PRIVATE
  SPMV_SHARED_MATRICES="${PROJECT_SOURCE_DIR}/../shared/matrices")

# One OpenMP thread per rank: the ranks already share the cores.
set(SPMV_MPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1)
foreach(np 2 3)
  add_test(NAME distributed_np${np}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
            $<TARGET_FILE:spmv_distributed_tests> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(distributed_np${np} PROPERTIES LABELS "host;mpi" TIMEOUT 600
                       ENVIRONMENT "${SPMV_MPI_TEST_ENV}" PROCESSORS ${np})
endforeach()

if(TARGET spmv_cli)
  add_test(NAME distributed_cli
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/distributed_cli_test.sh $<TARGET_FILE:spmv_cli> ${MPIEXEC_EXECUTABLE}
            ${MPIEXEC_NUMPROC_FLAG} ${CMAKE_CURRENT_BINARY_DIR}/distributed_cli_scratch)
  set_tests_properties(distributed_cli PROPERTIES LABELS "host;mpi" TIMEOUT 300
                       ENVIRONMENT "${SPMV_MPI_TEST_ENV}" PROCESSORS 2)
endif()
