//! A log file that rotates by size and keeps a bounded number of backups,
//! as the `lumberjack` logger behind upstream's `--audit-log-*` flags: when a
//! write would take the file past `max_size`, the file is renamed to
//! `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` beside it, a new one
//! is started, and backups beyond `max_backups` (0: all kept) or older than
//! `max_age` days (0: no limit) are removed. Files are created `0600`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// lumberjack's size limit when none is given: 100 MiB.
pub const DEFAULT_MAX_SIZE_MB: u64 = 100;

/// How a [`RotatingFile`] rotates.
#[derive(Clone, Debug)]
pub struct Rotation {
    /// Megabytes (MiB) before a rotation; 0 means [`DEFAULT_MAX_SIZE_MB`].
    pub max_size_mb: u64,
    /// Backups kept; 0 keeps all (subject to `max_age_days`).
    pub max_backups: usize,
    /// Days a backup is kept; 0 keeps them regardless of age.
    pub max_age_days: u64,
}

/// An append-only file that rotates.
pub struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
    rotation: Rotation,
}

fn open(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)
}

impl RotatingFile {
    /// Opens (or creates) the file at `path`, its directory included.
    pub fn open(path: &Path, rotation: Rotation) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = open(path)?;
        let size = file.metadata()?.len();
        Ok(RotatingFile {
            path: path.to_path_buf(),
            file,
            size,
            rotation,
        })
    }

    fn max_size(&self) -> u64 {
        let mb = match self.rotation.max_size_mb {
            0 => DEFAULT_MAX_SIZE_MB,
            mb => mb,
        };
        mb * 1024 * 1024
    }

    /// Appends `data` in one write, rotating first if it would not fit.
    pub fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        let len = data.len() as u64;
        if len > self.max_size() {
            return Err(std::io::Error::other(format!(
                "write length {len} exceeds maximum file size {}",
                self.max_size()
            )));
        }
        if self.size + len > self.max_size() {
            self.rotate()?;
        }
        self.file.write_all(data)?;
        self.size += len;
        Ok(())
    }

    /// The `(stem, extension)` of backup names: `audit` and `.log` for
    /// `audit.log`.
    fn name_parts(&self) -> (String, String) {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.path.extension() {
            Some(ext) => {
                let ext = format!(".{}", ext.to_string_lossy());
                (name[..name.len() - ext.len()].to_string(), ext)
            }
            None => (name, String::new()),
        }
    }

    fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        let (stem, ext) = self.name_parts();
        let now = jiff::Timestamp::now();
        let stamp = format!(
            "{}.{:03}",
            now.strftime("%Y-%m-%dT%H-%M-%S"),
            now.subsec_millisecond()
        );
        let mut backup = self.dir().join(format!("{stem}-{stamp}{ext}"));
        // Two rotations in one millisecond: keep both.
        let mut n = 1;
        while backup.exists() {
            backup = self.dir().join(format!("{stem}-{stamp}.{n}{ext}"));
            n += 1;
        }
        std::fs::rename(&self.path, &backup)?;
        self.file = open(&self.path)?;
        self.size = 0;
        self.remove_old_backups();
        Ok(())
    }

    /// The backups beside the file, newest first.
    pub fn backups(&self) -> Vec<PathBuf> {
        let (stem, ext) = self.name_parts();
        let prefix = format!("{stem}-");
        let mut found: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(self.dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let stamp = name.strip_prefix(&prefix)?.strip_suffix(ext.as_str())?;
                // A backup's name holds its rotation time.
                if stamp.len() < "2006-01-02T15-04-05.000".len()
                    || !stamp.as_bytes()[0].is_ascii_digit()
                {
                    return None;
                }
                let modified = e.metadata().and_then(|m| m.modified()).ok()?;
                Some((modified, e.path()))
            })
            .collect();
        found.sort_by(|a, b| b.cmp(a));
        found.into_iter().map(|(_, p)| p).collect()
    }

    fn remove_old_backups(&self) {
        let backups = self.backups();
        let max_age = Duration::from_secs(self.rotation.max_age_days * 24 * 3600);
        for (i, path) in backups.iter().enumerate() {
            let too_many = self.rotation.max_backups > 0 && i >= self.rotation.max_backups;
            let too_old = self.rotation.max_age_days > 0
                && std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > max_age);
            if too_many || too_old {
                if let Err(e) = std::fs::remove_file(path) {
                    tracing::warn!(path = %path.display(), error = %e, "removing an old audit log");
                }
            }
        }
    }

    /// Flushes what was written to the disk.
    pub fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_and_keeps_the_newest_backups() {
        let dir = std::env::temp_dir().join(format!("audit-rotate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("audit.log");
        let mut f = RotatingFile::open(
            &path,
            Rotation {
                max_size_mb: 1,
                max_backups: 2,
                max_age_days: 0,
            },
        )
        .unwrap();
        let line = vec![b'x'; 400 * 1024];
        for _ in 0..10 {
            f.write_all(&line).unwrap();
            std::thread::sleep(Duration::from_millis(3));
        }
        let backups = f.backups();
        assert_eq!(backups.len(), 2, "{backups:?}");
        for b in &backups {
            let name = b.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with("audit-") && name.ends_with(".log"),
                "{name}"
            );
            assert_eq!(std::fs::metadata(b).unwrap().len(), 800 * 1024);
        }
        // 10 writes of 400 KiB into 1 MiB files: 2 each, the last file holds 2.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 800 * 1024);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(f.write_all(&vec![b'y'; 2 * 1024 * 1024]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
