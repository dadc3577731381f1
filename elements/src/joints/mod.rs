//! Bilateral joints (filled in progressively).
