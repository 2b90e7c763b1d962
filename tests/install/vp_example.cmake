# ctest install_vp_example: installs this build tree into a fresh prefix (a plain
# `cmake --install`), then configures, builds and runs examples/vp against it in a fresh build
# directory, as a virtual platform's own project would; the example is built without LTO and
# (GCC) without the linker plugin, as clang or another GCC would link, so archives that hold
# only LTO bytecode fail here. Also: the prefix holds no Python-wheel files,
# and `vp 1ns` is refused with the time-resolution message.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX CONFIG LINK_FLAGS)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "vp_example.cmake: -D${v}= missing")
    endif()
endforeach()

function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${ARGN}\nexit ${rc}\n${out}\n${err}")
    endif()
    set(out "${out}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" --config "${CONFIG}")
if(EXISTS "${prefix}/fabricsim")
    message(FATAL_ERROR "cmake --install put the Python wheel's files (component python) in ${prefix}")
endif()
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/vp" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}" "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/vp")
message("${out}")
if(NOT out MATCHES "PASS")
    message(FATAL_ERROR "vp did not print PASS")
endif()

execute_process(COMMAND "${WORK_DIR}/build/vp" 1ns RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "needs a SystemC time resolution of 1 ps")
    message(FATAL_ERROR "vp 1ns: exit ${rc}, expected the time-resolution refusal:\n${out}\n${err}")
endif()
