//! What class of failure an error is, for a caller that sorts failures without matching every
//! variant of every error type: the Node and Python packages name their errors by it
//! (`ERR_TURNKEEPER_READ` / `turnkeeper.ReadError`, ...), and a gateway can decide by it
//! whether to pass a body on untouched (a body it cannot read) or to stop (a repair that failed
//! closed).

use turnkeeper_model::ModelError;

use crate::{Error, RepairError};

/// The class of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// The input is not UTF-8, not JSON, or could not be read at all.
    Read,
    /// Valid JSON of no format turnkeeper reads, or not of the format asked.
    Format,
    /// A repair failed closed: a thinking block would have changed (a turnkeeper bug; nothing
    /// was changed).
    Repair,
    /// A session store or the turn store could not be found, read or written.
    Store,
}

/// The [`ErrorClass`] of an error the library returns.
pub trait HasErrorClass {
    /// The class.
    fn error_class(&self) -> ErrorClass;
}

impl HasErrorClass for ModelError {
    fn error_class(&self) -> ErrorClass {
        match self {
            ModelError::InvalidUtf8 { .. } | ModelError::Syntax { .. } | ModelError::Io { .. } => {
                ErrorClass::Read
            }
            _ => ErrorClass::Format,
        }
    }
}

impl HasErrorClass for crate::opencode::OpencodeError {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Format
    }
}

impl HasErrorClass for RepairError {
    fn error_class(&self) -> ErrorClass {
        match self {
            RepairError::Model(m) => m.error_class(),
            _ => ErrorClass::Repair,
        }
    }
}

impl HasErrorClass for crate::recovery::RecoverError {
    fn error_class(&self) -> ErrorClass {
        match self {
            crate::recovery::RecoverError::Request(m) => m.error_class(),
            crate::recovery::RecoverError::Prevent(p) => p.error_class(),
            _ => ErrorClass::Repair,
        }
    }
}

impl HasErrorClass for crate::turns::TurnStoreError {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Store
    }
}

#[cfg(feature = "stores")]
impl HasErrorClass for crate::stores::StoreError {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Store
    }
}

#[cfg(feature = "stores")]
impl HasErrorClass for crate::stores::WriteError {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Store
    }
}

impl HasErrorClass for Error {
    fn error_class(&self) -> ErrorClass {
        match self {
            Error::Model(m) => m.error_class(),
            Error::Repair(r) => r.error_class(),
            Error::Opencode(o) => o.error_class(),
            Error::NotInspected { .. } => ErrorClass::Format,
            #[cfg(feature = "stores")]
            Error::Store(s) => s.error_class(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, check_str};

    /// The class of the error `check_str` returns for `body`.
    fn check(body: &str, expect: ErrorClass) {
        let e = check_str(body, &Options::default()).expect_err("an error");
        assert_eq!(e.error_class(), expect, "{body:?}: {e}");
    }

    #[test]
    fn each_failure_has_its_kind() {
        check("{\"messages\": [", ErrorClass::Read);
        check("[1, 2]", ErrorClass::Format);
        check("{\"no\": \"format\"}", ErrorClass::Format);
        // A turn store where a file stands in the way of its directory.
        let dir = std::env::temp_dir().join(format!("tk-error-class-{}", std::process::id()));
        std::fs::write(&dir, b"not a directory").expect("a file");
        let e = crate::TurnStore::open(dir.join("turns")).expect_err("no store under a file");
        let _ = std::fs::remove_file(&dir);
        assert_eq!(e.error_class(), ErrorClass::Store, "{e}");
    }

    #[test]
    fn a_body_that_does_not_read_is_a_read_failure_however_wrapped() {
        let unreadable =
            || crate::read("{\"messages\": [", crate::FormatHint::Auto).expect_err("does not read");
        let unsniffed = || crate::read("[1, 2]", crate::FormatHint::Auto).expect_err("no format");
        assert_eq!(unreadable().error_class(), ErrorClass::Read);
        assert_eq!(unsniffed().error_class(), ErrorClass::Format);
        for (e, expect) in [
            (unreadable(), ErrorClass::Read),
            (unsniffed(), ErrorClass::Format),
        ] {
            let repair = RepairError::Model(e);
            assert_eq!(repair.error_class(), expect, "{repair}");
            let recover = crate::recovery::RecoverError::Prevent(repair);
            assert_eq!(recover.error_class(), expect, "{recover}");
        }
        let request = crate::recovery::RecoverError::Request(unreadable());
        assert_eq!(request.error_class(), ErrorClass::Read, "{request}");
    }

    #[cfg(feature = "stores")]
    #[test]
    fn a_store_that_is_not_there_is_a_store_failure() {
        let e = crate::stores::opencode::locate(Some(std::path::Path::new("/nonexistent/tk")))
            .expect_err("no store there");
        assert_eq!(e.error_class(), ErrorClass::Store, "{e}");
        assert_eq!(crate::Error::from(e).error_class(), ErrorClass::Store);
    }
}
