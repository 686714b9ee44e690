//! placeholder

pub mod dashboard;
