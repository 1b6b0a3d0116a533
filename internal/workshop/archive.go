package workshop

import (
	"archive/tar"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/termlab/termlab/internal/progress"
)

// atEnd names the position after the last entry, in errors.
const atEnd = "the end of the archive"

// maxManifestSize bounds manifest.json, read into memory before anything else.
const maxManifestSize = 4 << 20

// progressEvery is how often a long archive pass reports its progress.
const progressEvery = 5 * time.Second

// writeArchive writes TopDir/manifest.json and then every file of m from
// srcDir, in manifest order, as a gzip-compressed tar: with pigz -1 when it
// is installed (every core), else Go's gzip at BestSpeed (one core). Each
// file is hashed again while it is written, so the archive holds exactly what
// the manifest says. The archive appears at out only when complete.
func writeArchive(ctx context.Context, log *progress.Logger, out string, m *Manifest, manifestJSON []byte, srcDir string) (compressor string, err error) {
	tmp := out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(tmp)
		}
	}()

	zw, compressor, wait, err := compressTo(ctx, f)
	if err != nil {
		return "", err
	}
	total := m.TotalSize() + int64(len(manifestJSON))
	var done atomic.Int64
	stop := reportProgress(log, "writing the archive ("+compressor+")", &done, total)
	defer stop()

	tw := tar.NewWriter(&countingWriter{w: zw, n: &done})
	mtime := m.CreatedAt.Truncate(time.Second)
	if err := tw.WriteHeader(header(path.Join(TopDir, ManifestFile), int64(len(manifestJSON)), 0o644, mtime)); err != nil {
		return compressor, err
	}
	if _, err := tw.Write(manifestJSON); err != nil {
		return compressor, err
	}
	for _, file := range m.Files {
		if err := ctx.Err(); err != nil {
			return compressor, err
		}
		if err := tw.WriteHeader(header(path.Join(TopDir, file.Path), file.Size, int64(file.Mode), mtime)); err != nil {
			return compressor, err
		}
		src, err := os.Open(filepath.Join(srcDir, filepath.FromSlash(file.Path)))
		if err != nil {
			return compressor, err
		}
		h := sha256.New()
		n, err := io.Copy(tw, io.TeeReader(src, h))
		src.Close()
		if err != nil {
			return compressor, fmt.Errorf("archiving %s: %w", file.Path, err)
		}
		if n != file.Size || hex.EncodeToString(h.Sum(nil)) != file.SHA256 {
			return compressor, fmt.Errorf("archiving %s: the file changed after it was hashed", file.Path)
		}
	}
	if err := tw.Close(); err != nil {
		return compressor, err
	}
	if err := zw.Close(); err != nil {
		return compressor, err
	}
	if err := wait(); err != nil {
		return compressor, err
	}
	if err := f.Sync(); err != nil {
		return compressor, err
	}
	if err := f.Close(); err != nil {
		return compressor, err
	}
	return compressor, os.Rename(tmp, out)
}

func header(name string, size, mode int64, mtime time.Time) *tar.Header {
	return &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode,
		ModTime: mtime, Uid: 0, Gid: 0, Format: tar.FormatPAX,
	}
}

// compressTo returns a gzip writer into w: a pigz process when pigz is on
// PATH, else compress/gzip at BestSpeed. wait waits for pigz to finish.
func compressTo(ctx context.Context, w io.Writer) (io.WriteCloser, string, func() error, error) {
	if p, err := exec.LookPath("pigz"); err == nil {
		cmd := exec.CommandContext(ctx, p, "-1", "-c")
		cmd.Stdout = w
		var stderr strings.Builder
		cmd.Stderr = &stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, "", nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, "", nil, err
		}
		return in, "pigz -1", func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("pigz: %w: %s", err, stderr.String())
			}
			return nil
		}, nil
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return nil, "", nil, err
	}
	return zw, "gzip -1, one core: install pigz to use every core", func() error { return nil }, nil
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// reportProgress prints "<what>: X of Y (Z%)" every progressEvery until stop.
func reportProgress(log *progress.Logger, what string, done *atomic.Int64, total int64) (stop func()) {
	begin := time.Now()
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				n := done.Load()
				pct := 0.0
				if total > 0 {
					pct = 100 * float64(n) / float64(total)
				}
				log.Infof("… %s: %s of %s (%.0f%%), %s", what, MiB(n), MiB(total), pct, time.Since(begin).Round(time.Second))
			}
		}
	}()
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			close(quit)
			<-finished
		}
	}
}

// MiB renders a size for people.
func MiB(n int64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%.0f GiB", float64(n)/(1<<30))
	}
	if n >= 2<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	if n < 10<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// entryFunc receives one archive entry after manifest.json: its manifest
// entry and its body, which it must read to the end (or fail).
type entryFunc func(f File, body io.Reader) error

// DamagedError says the archive is not the bundle its manifest describes.
type DamagedError struct {
	Archive string
	Reason  string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("bundle %s is damaged: %s", e.Archive, e.Reason)
}

// walkArchive reads the archive once: manifest.json first (parsed, and
// passed to onManifest, which may stop the walk with an error), then every
// file, each checked against the manifest while fn consumes it: the path is
// listed, the type regular, the size and sha256 equal. At the end every
// listed file must have been seen and the gzip stream must end cleanly (its
// checksum is verified there). Any mismatch is a *DamagedError.
func walkArchive(ctx context.Context, log *progress.Logger, what, archive string, onManifest func(m *Manifest, raw []byte) error, fn entryFunc) (*Manifest, []byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	var read atomic.Int64
	stop := reportProgress(log, what, &read, st.Size())
	defer stop()
	damaged := func(format string, args ...any) error {
		return &DamagedError{Archive: archive, Reason: fmt.Sprintf(format, args...)}
	}
	current := "the gzip header"
	streamErr := func(err error) error {
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			if current == atEnd {
				return damaged("truncated: the gzip stream ends before its trailer (%s of the file read)", MiB(read.Load()))
			}
			return damaged("truncated: the file ends inside %s (%s of the file read)", current, MiB(read.Load()))
		case errors.Is(err, gzip.ErrChecksum):
			return damaged("corrupt: the gzip checksum does not match (near %s)", current)
		case errors.Is(err, gzip.ErrHeader):
			if current == atEnd {
				return damaged("there is data after the end of the archive (appended to it?)")
			}
			return damaged("not a gzip archive, or corrupt near %s: %v", current, err)
		}
		var ce flate.CorruptInputError
		if errors.As(err, &ce) {
			return damaged("corrupt compressed data in %s: %v", current, err)
		}
		if errors.Is(err, tar.ErrHeader) {
			return damaged("corrupt tar data after %s: %v", current, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return damaged("reading %s: %v", current, err)
	}

	zr, err := gzip.NewReader(&countingReader{r: f, n: &read})
	if err != nil {
		return nil, nil, streamErr(err)
	}
	tr := tar.NewReader(zr)

	current = ManifestFile
	hdr, err := tr.Next()
	if err != nil {
		return nil, nil, streamErr(err)
	}
	if hdr.Name != path.Join(TopDir, ManifestFile) || hdr.Typeflag != tar.TypeReg || hdr.Size > maxManifestSize {
		return nil, nil, damaged("the first entry is %q, not %s/%s: not a termlab workshop bundle", hdr.Name, TopDir, ManifestFile)
	}
	raw, err := io.ReadAll(tr)
	if err != nil {
		return nil, nil, streamErr(err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, nil, damaged("%v", err)
	}
	if onManifest != nil {
		if err := onManifest(m, raw); err != nil {
			return m, raw, err
		}
	}

	want := map[string]File{}
	for _, f := range m.Files {
		want[f.Path] = f
	}
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return m, raw, err
		}
		current = "the entry after " + current
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, raw, streamErr(err)
		}
		rel, ok := strings.CutPrefix(hdr.Name, TopDir+"/")
		if !ok || checkRelPath(rel) != nil {
			return m, raw, damaged("unexpected entry %q outside %s/", hdr.Name, TopDir)
		}
		entry, ok := want[rel]
		if !ok {
			return m, raw, damaged("%s is in the archive but not in manifest.json", rel)
		}
		if seen[rel] {
			return m, raw, damaged("%s appears twice", rel)
		}
		seen[rel] = true
		current = rel
		if hdr.Typeflag != tar.TypeReg {
			return m, raw, damaged("%s is not a regular file (type %q)", rel, hdr.Typeflag)
		}
		if hdr.Size != entry.Size {
			return m, raw, damaged("%s is %d bytes, manifest.json says %d", rel, hdr.Size, entry.Size)
		}
		h := sha256.New()
		body := &errTrackingReader{r: io.TeeReader(tr, h)}
		if err := fn(entry, body); err != nil {
			if body.err != nil && body.err != io.EOF {
				return m, raw, streamErr(body.err)
			}
			return m, raw, err
		}
		// fn must have read the body; make sure, then check the digest.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return m, raw, streamErr(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != entry.SHA256 {
			return m, raw, damaged("%s: sha256 %s, manifest.json says %s", rel, got, entry.SHA256)
		}
	}
	current = atEnd
	// The gzip checksum is verified when its stream is read to the end;
	// anything after the last member (appended junk) fails here too.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return m, raw, streamErr(err)
	}
	if err := zr.Close(); err != nil {
		return m, raw, streamErr(err)
	}
	var missing []string
	for p := range want {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return m, raw, damaged("incomplete: %d files of manifest.json are not in the archive: %s", len(missing), strings.Join(missing, ", "))
	}
	return m, raw, nil
}

// errTrackingReader remembers the first read error, so a consumer's error
// (docker load failing on a short stream) can be told from the archive's own.
type errTrackingReader struct {
	r   io.Reader
	err error
}

func (e *errTrackingReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}
