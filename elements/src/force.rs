//! Force elements (filled in progressively).
