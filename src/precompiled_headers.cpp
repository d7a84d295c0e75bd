// Compiled only so that the libraries can share the precompiled header of rossoctl_pch
// (CMakeLists.txt): a target needs a source to carry one.
