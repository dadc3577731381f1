//! Inertial elements (filled in progressively).
