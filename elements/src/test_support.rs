//! Helpers shared by the element unit tests.

use saltus_core::{BuildError, Element};

/// The parameter an element build rejected (panics if it was accepted or failed otherwise).
pub(crate) fn param_error(r: Result<Box<dyn Element>, BuildError>) -> String {
    match r {
        Err(BuildError::InvalidParameter { parameter, .. }) => parameter,
        Err(e) => panic!("unexpected error {e}"),
        Ok(e) => panic!("accepted {e:?}"),
    }
}
