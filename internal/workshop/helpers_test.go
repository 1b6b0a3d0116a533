package workshop

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path"
	"path/filepath"
	"time"
)

// writeUnchecked writes an archive of manifestJSON and files (with their
// real sizes and contents), whatever the manifest says.
func writeUnchecked(archive string, manifestJSON []byte, src string, files []File) error {
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	now := time.Now()
	if err := tw.WriteHeader(header(path.Join(TopDir, ManifestFile), int64(len(manifestJSON)), 0o644, now)); err != nil {
		return err
	}
	if _, err := tw.Write(manifestJSON); err != nil {
		return err
	}
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(file.Path)))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(header(path.Join(TopDir, file.Path), int64(len(b)), 0o644, now)); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
