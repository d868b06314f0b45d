//! Off Linux there is no user_events_data to hand over, and `awaits`
//! never says to wait: nothing listens.

use super::Listening;
use crate::Error;

pub(super) fn listen() -> Result<Listening, Error> {
    Err(Error::Unavailable(Box::new(crate::status::status())))
}
