//! # power: the ssdsim power model (to be built by the power issue)
//!
//! **Dependency rule:** depends on ssd-core only.
