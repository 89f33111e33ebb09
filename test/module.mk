# test/: end-to-end tests through the ICD loader; each layer adds its own.
include test/compiler/module.mk
