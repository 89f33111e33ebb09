# test: filled in as the layer is built
