package cluster

import "io"

// pipe is an io.Pipe whose writer side can be closed with the producer's error.
type pipeWriter struct{ *io.PipeWriter }

func newPipe() (*io.PipeReader, pipeWriter) {
	r, w := io.Pipe()
	return r, pipeWriter{w}
}

func (w pipeWriter) closeWith(err error) error {
	_ = w.CloseWithError(err)
	return err
}
