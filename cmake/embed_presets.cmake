# Cluster presets are data (configs/clusters/*.yaml). They are compiled into the binary so that
# `--cluster helios` works from any directory; the YAML files stay the single source of truth.
file(GLOB RLTUNE_PRESET_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/configs/clusters/*.yaml)
set(RLTUNE_PRESETS_CPP ${PROJECT_BINARY_DIR}/generated/cluster_presets.cpp)
add_custom_command(
  OUTPUT ${RLTUNE_PRESETS_CPP}
  COMMAND ${CMAKE_COMMAND} -DOUT=${RLTUNE_PRESETS_CPP} -DDIR=${PROJECT_SOURCE_DIR}/configs/clusters
          -P ${PROJECT_SOURCE_DIR}/cmake/write_presets.cmake
  DEPENDS ${RLTUNE_PRESET_FILES} ${PROJECT_SOURCE_DIR}/cmake/write_presets.cmake
  COMMENT "Embedding cluster presets")
