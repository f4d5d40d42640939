// build-flags: -shared -fPIC
/*
 * empty-preload: an LD_PRELOAD shim that does nothing, built the ordinary
 * way. The benchmark (scripts/bench.py) measures the probe's start-up
 * against it: what any preloaded library costs is the floor.
 */
int dt_empty_preload;
