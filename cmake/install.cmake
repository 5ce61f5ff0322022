# What `cmake --install build --prefix P` puts where (SPEC §17):
#
#   P/bin/rolter, rolter-sim, rolter-bench      (stripped with --strip)
#   P/share/rolter/rolter.toml.example          examples/rolter.toml
#   P/share/doc/rolter/README.md, docs/...      the documentation, laid out as in the source
#                                               tree so its links hold
#   P/lib/systemd/system/rolter.service,        the units, their ExecStart pointing at P/bin
#     rolter-control-plane.service
#
# The dashboard is compiled into rolter (src/ui/): nothing of it is installed.
include(GNUInstallDirs)

set(rolter_installed_programs rolter rolter-sim)
if(TARGET rolter-bench)
  list(APPEND rolter_installed_programs rolter-bench)
endif()
install(TARGETS ${rolter_installed_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(FILES examples/rolter.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/rolter
        RENAME rolter.toml.example)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.svg" PATTERN "*.png")

# The units in deploy/systemd/ name /usr/bin/rolter; installed under another prefix, they name
# that prefix's. The prefix is read at install time, so --prefix and DESTDIR both apply.
set(rolter_units rolter.service rolter-control-plane.service)
install(CODE "
  foreach(unit IN ITEMS ${rolter_units})
    file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/\${unit}\" text)
    string(REPLACE \"/usr/bin/rolter \" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/rolter \"
           text \"\${text}\")
    file(WRITE \"${PROJECT_BINARY_DIR}/systemd/\${unit}\" \"\${text}\")
    file(INSTALL \"${PROJECT_BINARY_DIR}/systemd/\${unit}\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  endforeach()
")
