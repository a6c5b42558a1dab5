//! The ssdsim application layer: closes runtime choices into enums and runs them.
