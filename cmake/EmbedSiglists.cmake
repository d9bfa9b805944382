# Embeds config/siglists/*.txt and config/scrub/rules.txt into seismo_signature so
# that SignatureGenerator::LoadDefault() and Scrubber::Default() work from any
# working directory. The generated file defines seismo::signature_internal::
# kEmbeddedSiglists and kEmbeddedScrubRules (see src/signature/embedded_siglists.h);
# it is regenerated when a file changes.
set(SEISMO_SIGLIST_NAMES irrelevant_signature_re.txt prefix_signature_re.txt
    signature_sentinels.txt signatures_with_line_numbers_re.txt)
set(SEISMO_SCRUB_RULES scrub/rules.txt)  # relative to config/

if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: cmake -DOUT=<file.cc> -DDIR=<config dir> -P EmbedSiglists.cmake
  set(body "// Generated from config/siglists and config/scrub by cmake/EmbedSiglists.cmake. Do not edit.\n")
  string(APPEND body "#include \"signature/embedded_siglists.h\"\n\nnamespace seismo::signature_internal {\nnamespace {\n")
  # Appends `file`'s bytes to body as kData<i>.
  macro(embed_file file i)
    file(READ ${file} hex HEX)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
    string(APPEND body "const char kData${i}[] = {${bytes} 0};\n")
  endmacro()
  set(entries "")
  set(i 0)
  foreach(name IN LISTS SEISMO_SIGLIST_NAMES)
    embed_file(${DIR}/siglists/${name} ${i})
    string(APPEND entries "    {\"${name}\", std::string_view(kData${i}, sizeof(kData${i}) - 1)},\n")
    math(EXPR i "${i} + 1")
  endforeach()
  embed_file(${DIR}/${SEISMO_SCRUB_RULES} ${i})
  string(APPEND body "}  // namespace\n\nconst std::array<EmbeddedSiglist, ${i}> kEmbeddedSiglists = {{\n${entries}}};\n")
  string(APPEND body "const std::string_view kEmbeddedScrubRules(kData${i}, sizeof(kData${i}) - 1);\n\n")
  string(APPEND body "}  // namespace seismo::signature_internal\n")
  file(WRITE ${OUT}.tmp "${body}")
  file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
  file(REMOVE ${OUT}.tmp)
  return()
endif()

if(TARGET seismo_signature)
  set(SEISMO_SIGLIST_CC ${PROJECT_BINARY_DIR}/generated/embedded_siglists.cc)
  list(TRANSFORM SEISMO_SIGLIST_NAMES PREPEND ${PROJECT_SOURCE_DIR}/config/siglists/
       OUTPUT_VARIABLE SEISMO_SIGLIST_FILES)
  add_custom_command(
    OUTPUT ${SEISMO_SIGLIST_CC}
    COMMAND ${CMAKE_COMMAND} "-DOUT=${SEISMO_SIGLIST_CC}" "-DDIR=${PROJECT_SOURCE_DIR}/config"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedSiglists.cmake
    DEPENDS ${SEISMO_SIGLIST_FILES} ${PROJECT_SOURCE_DIR}/config/${SEISMO_SCRUB_RULES}
            ${PROJECT_SOURCE_DIR}/cmake/EmbedSiglists.cmake
    COMMENT "Embedding signature lists and scrubbing rules"
    VERBATIM)
  target_sources(seismo_signature PRIVATE ${SEISMO_SIGLIST_CC})
endif()
