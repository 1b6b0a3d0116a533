package nodeimage

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"
)

// Entry is one file of an image root filesystem made by WriteTar.
type Entry struct {
	Path    string // absolute path inside the image
	Mode    int64
	Source  string // host file to copy, or
	Content []byte // literal content, or
	Link    string // symlink target
}

// epoch keeps tarballs reproducible: same inputs, same bytes.
var epoch = time.Unix(0, 0).UTC()

// WriteTar writes entries (and their parent directories) as a tar stream owned by root.
func WriteTar(w io.Writer, entries []Entry) error {
	tw := tar.NewWriter(w)
	if err := writeEntries(tw, entries); err != nil {
		return err
	}
	return tw.Close()
}

// MergeTar copies the tar stream base, then appends entries.
func MergeTar(w io.Writer, base io.Reader, entries []Entry) error {
	tw := tar.NewWriter(w)
	tr := tar.NewReader(base)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading base tar: %w", err)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if err := writeEntries(tw, entries); err != nil {
		return err
	}
	return tw.Close()
}

func writeEntries(tw *tar.Writer, entries []Entry) error {
	dirs := map[string]bool{}
	var dirList []string
	for _, e := range entries {
		for d := path.Dir(e.Path); d != "/" && d != "."; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				dirList = append(dirList, d)
			}
		}
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	for _, e := range entries {
		name := e.Path[1:]
		switch {
		case e.Link != "":
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: e.Link, Mode: 0o777, ModTime: epoch}); err != nil {
				return err
			}
		case e.Source != "":
			f, err := os.Open(e.Source)
			if err != nil {
				return fmt.Errorf("adding %s to image tar: %w", e.Source, err)
			}
			st, err := f.Stat()
			if err == nil {
				err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: e.Mode, Size: st.Size(), ModTime: epoch})
			}
			if err == nil {
				_, err = io.Copy(tw, f)
			}
			f.Close()
			if err != nil {
				return fmt.Errorf("adding %s to image tar: %w", e.Source, err)
			}
		default:
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: e.Mode, Size: int64(len(e.Content)), ModTime: epoch}); err != nil {
				return err
			}
			if _, err := tw.Write(e.Content); err != nil {
				return err
			}
		}
	}
	return nil
}
