//! Validation of a Responses body: the pairing plan's defects.

use super::{pairing::Plan, view::Parsed};
use crate::{Defect, WireError};

/// See [`crate::validate`].
pub(crate) fn validate(bytes: &[u8]) -> Result<Vec<Defect>, WireError> {
    let parsed = Parsed::new(bytes)?;
    let slots = parsed.slots();
    Ok(Plan::new(&slots, parsed.server_side).defects(&slots))
}
