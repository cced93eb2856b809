// read-truerandom.go - N bytes (default 32) of /dev/truerandom, in hex.
//
//	go run read-truerandom.go [BYTES [DEVICE]]
//
// Go's os.Open puts a character device that can be polled into
// O_NONBLOCK and waits for it in the runtime's poller. On /dev/truerandom
// that means the daemon sees non-blocking reads: they get EAGAIN while
// other readers wait, never join its fair queue, and a child process
// that inherits the descriptor finds it non-blocking too. So open it
// with syscall.Open, which leaves the descriptor blocking, and wrap it
// with os.NewFile, which keeps it that way (a blocking read holds one OS
// thread while it waits, which is what a blocking device asks). Short
// reads are normal: io.ReadFull loops, and asks for no more than is
// still missing.
package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

func readTruerandom(device string, n int) ([]byte, error) {
	fd, err := syscall.Open(device, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		// EACCES: not in group truerandom; ENOENT: no daemon serving.
		return nil, &os.PathError{Op: "open", Path: device, Err: err}
	}
	f := os.NewFile(uintptr(fd), device)
	defer f.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func main() {
	n, device := 32, "/dev/truerandom"
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		device = os.Args[2]
	}
	buf, err := readTruerandom(device, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "read-truerandom:", err)
		os.Exit(1)
	}
	fmt.Println(hex.EncodeToString(buf))
}
