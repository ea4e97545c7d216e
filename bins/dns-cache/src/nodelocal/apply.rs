//! Carrying out [`rules`](super::rules) on one IP family: `iptables-save` to see what is
//! there, `iptables-restore --noflush` to insert what is missing or delete what is ours. The
//! programs run through [`iptables_exec`].

use iptables_exec::{ExecError, Iptables};
use iptables_model::codec::Style;
use iptables_model::{EmitError, OwnedRestoreFile, ParseError, Table};

use super::rules::{PlacedRule, count_present, delete_present, insert_missing};

/// Why the rules could not be checked or changed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// An iptables program failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// `iptables-save` printed something iptables-model cannot read.
    #[error("reading iptables-save output: {0}")]
    Parse(#[source] ParseError),
    /// A rule holds a value restore text cannot carry (a control character in a name taken
    /// from the command line, say): nothing was restored.
    #[error("writing the rules: {0}")]
    Emit(#[source] EmitError),
}

impl ApplyError {
    /// Whether another process held the xtables lock (retried at the next sync).
    pub fn is_lock(&self) -> bool {
        matches!(self, Self::Exec(error) if error.is_lock())
    }
}

/// Inserts the rules of `wanted` that are missing; returns how many were.
///
/// # Errors
///
/// The tables could not be read, or the restore failed.
pub async fn ensure(iptables: &Iptables, wanted: &[PlacedRule]) -> Result<usize, ApplyError> {
    let counts = counts(iptables, wanted).await?;
    let missing = counts.iter().filter(|&&n| n == 0).count();
    if missing > 0 {
        let document = insert_missing(wanted, &counts);
        let text = document.to_text(Style::Restore).map_err(ApplyError::Emit)?;
        iptables.restore(&text).await?;
    }
    Ok(missing)
}

/// Deletes every copy of the rules of `wanted`; returns how many were deleted.
///
/// # Errors
///
/// The tables could not be read, or the restore failed.
pub async fn remove(iptables: &Iptables, wanted: &[PlacedRule]) -> Result<usize, ApplyError> {
    let counts = counts(iptables, wanted).await?;
    let present = counts.iter().sum();
    if present > 0 {
        let document = delete_present(wanted, &counts);
        let text = document.to_text(Style::Restore).map_err(ApplyError::Emit)?;
        iptables.restore(&text).await?;
    }
    Ok(present)
}

/// How many copies of each rule the kernel has.
async fn counts(iptables: &Iptables, wanted: &[PlacedRule]) -> Result<Vec<usize>, ApplyError> {
    let mut saved = OwnedRestoreFile::default();
    for table in [Table::Raw, Table::Filter] {
        let text = iptables.save(table).await?;
        let file = iptables_model::parse(&text).map_err(ApplyError::Parse)?;
        saved.tables.extend(file.into_owned().tables);
    }
    Ok(count_present(wanted, &saved, iptables.ipv6()))
}
