//! Output files written atomically: checked for writability before any
//! benchmark runs, written to a temporary file beside the target and renamed
//! into place, so a failed run never leaves a half-written file.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file that will be written at the end of the run.
#[derive(Debug)]
pub struct PendingFile {
    flag: &'static str,
    path: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

/// A one-line complaint about a command-line flag (exit code 2).
#[derive(Debug)]
pub struct FlagError(pub String);

impl PendingFile {
    /// Reserves `path` (named by `flag` in errors) by creating its temporary file now.
    pub fn create(flag: &'static str, path: &Path) -> Result<PendingFile, FlagError> {
        let name = path
            .file_name()
            .ok_or_else(|| FlagError(format!("{flag}: '{}' is not a file path", path.display())))?;
        if path.is_dir() {
            return Err(FlagError(format!(
                "{flag}: '{}' is a directory",
                path.display()
            )));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        File::create(&tmp)
            .map_err(|e| FlagError(format!("{flag}: cannot write '{}': {e}", path.display())))?;
        Ok(PendingFile {
            flag,
            path: path.to_path_buf(),
            tmp,
            committed: false,
        })
    }

    /// Writes `bytes` to the temporary file and renames it into place.
    pub fn commit(mut self, bytes: &[u8]) -> Result<(), String> {
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&self.tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            fs::rename(&self.tmp, &self.path)
        };
        write()
            .map_err(|e| format!("{}: cannot write '{}': {e}", self.flag, self.path.display()))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically (temporary file + rename).
pub fn write_atomic(flag: &'static str, path: &Path, bytes: &[u8]) -> Result<(), String> {
    PendingFile::create(flag, path)
        .map_err(|e| e.0)?
        .commit(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncommitted_files_leave_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("sumac-bench-out-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("a.csv");
        drop(PendingFile::create("--csv", &target).unwrap());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        write_atomic("--csv", &target, b"x").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"x");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
        assert!(PendingFile::create("--csv", &dir.join("missing/x.csv")).is_err());
    }
}
