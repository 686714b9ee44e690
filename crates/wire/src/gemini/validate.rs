//! Validation of a Gemini body: the pairing defects of its turns.

use super::{
    model::Body,
    turns::{defects, turns},
};
use crate::{Defect, WireError};

/// See [`crate::validate`].
pub(crate) fn validate(bytes: &[u8]) -> Result<Vec<Defect>, WireError> {
    crate::splice::expect_object(bytes)?;
    let body: Body<'_> = serde_json::from_str(crate::splice::utf8(bytes)?)?;
    Ok(defects(&turns(&body.contents.list)))
}
