//! Finite-difference checks of element Hessians (filled in by the element-test work).
