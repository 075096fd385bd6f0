# Presets are data (configs/<kind>/*.yaml): cluster files and workload models. They are compiled into the
# binary so that `--cluster helios` or `--like philly` work from any directory; the YAML files stay the
# single source of truth. embed_presets(VAR KIND NAMESPACE HEADER) sets VAR to the generated source.
function(embed_presets var kind namespace header)
  file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/configs/${kind}/*.yaml)
  set(out ${PROJECT_BINARY_DIR}/generated/${kind}_presets.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DDIR=${PROJECT_SOURCE_DIR}/configs/${kind} -DNAMESPACE=${namespace}
            -DHEADER=${header} -P ${PROJECT_SOURCE_DIR}/cmake/write_presets.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/write_presets.cmake
    COMMENT "Embedding ${kind} presets")
  set(${var} ${out} PARENT_SCOPE)
endfunction()
