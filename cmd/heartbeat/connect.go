package main

import (
	"net"
	"os"
	"syscall"
	"time"
)

// connectFrom opens a TCP connection to addr by a non-blocking connect(2)
// and reports the source port the kernel gave it, also when the SYN is
// never answered: the port is chosen when connect begins. lab:graceful
// needs it to see a new connection take the port of an unanswered one
// whose conntrack entry still points at a deleted pod (kubernetes#101607);
// net.Dialer closes a failed socket without saying its port.
func connectFrom(addr *net.TCPAddr, deadline time.Time) (conn net.Conn, port int, err error) {
	family, sa := sockaddrOf(addr)
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, 0, os.NewSyscallError("socket", err)
	}
	// The file owns fd from here; being non-blocking, it is registered with
	// Go's poller, whose wait for writability is the wait for the connect.
	f := os.NewFile(uintptr(fd), "tcp "+addr.String())
	defer f.Close() // net.FileConn keeps a duplicate
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, 0, err
	}
	var connectErr error
	if err := rc.Control(func(fd uintptr) {
		if e := syscall.Connect(int(fd), sa); e != nil && e != syscall.EINPROGRESS {
			connectErr = os.NewSyscallError("connect", e)
			return
		}
		if local, e := syscall.Getsockname(int(fd)); e == nil {
			port = portOf(local)
		}
	}); err != nil {
		return nil, 0, err
	}
	if connectErr != nil {
		return nil, port, connectErr
	}
	if err := f.SetWriteDeadline(deadline); err != nil {
		return nil, port, err
	}
	var soErr error
	if err := rc.Write(func(fd uintptr) bool { return connectEnded(int(fd), &soErr) }); err != nil {
		return nil, port, err // the deadline (a timeout), or the poller's own error
	}
	if soErr != nil {
		return nil, port, os.NewSyscallError("connect", soErr)
	}
	conn, err = net.FileConn(f)
	return conn, port, err
}

// connectEnded reports whether the connect on fd has ended, setting *failed
// to its error when it failed; it is called again each time fd turns
// writable, as Go's own connect does.
func connectEnded(fd int, failed *error) bool {
	n, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	if err != nil {
		*failed = err
		return true
	}
	switch e := syscall.Errno(n); e {
	case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		return false
	case 0:
		// No error yet: connected only once the peer is known.
		_, err := syscall.Getpeername(fd)
		return err == nil
	default:
		*failed = e
		return true
	}
}

func sockaddrOf(addr *net.TCPAddr) (int, syscall.Sockaddr) {
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		return syscall.AF_INET, sa
	}
	sa := &syscall.SockaddrInet6{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To16())
	return syscall.AF_INET6, sa
}

func portOf(sa syscall.Sockaddr) int {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return a.Port
	case *syscall.SockaddrInet6:
		return a.Port
	}
	return 0
}
