# test: filled in as the layer is built
include test/api/module.mk
include test/remote/module.mk

include test/compiler/module.mk
