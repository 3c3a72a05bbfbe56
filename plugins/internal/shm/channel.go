package shm

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"
)

// Channel states (plugin.proto describes the layout).
const (
	ChanIdle    = 0
	ChanRequest = 1
	ChanReply   = 2
	ChanClosed  = 3
)

const chanHeader = 64

// Channel is a request/reply slot in shared memory with futex doorbells.
type Channel struct {
	mem []byte
	n   int
}

// NewChannel lays a channel over mem.
func NewChannel(mem []byte) (*Channel, error) {
	if len(mem) < chanHeader+2*1024 {
		return nil, fmt.Errorf("channel of %d bytes is too small", len(mem))
	}
	if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("channel memory is not aligned")
	}
	return &Channel{mem: mem, n: (len(mem) - chanHeader) / 2}, nil
}

func (c *Channel) word() *uint32 { return (*uint32)(unsafe.Pointer(&c.mem[0])) }

// State returns the current state.
func (c *Channel) State() uint32 { return atomic.LoadUint32(c.word()) }

// Set stores a state and wakes the other side.
func (c *Channel) Set(state uint32) {
	atomic.StoreUint32(c.word(), state)
	futexWake(c.word())
}

// CompareAndSet changes the state from old to new, without waking.
func (c *Channel) CompareAndSet(old, new uint32) bool {
	return atomic.CompareAndSwapUint32(c.word(), old, new)
}

// Wait blocks while the state is old, for at most d (d <= 0: no limit),
// and returns the state it then finds. It may return early.
//
// It does not poll before sleeping: on a loaded machine a polling thread
// takes the core the other side needs (measured slower on a shared
// 2-core VM).
func (c *Channel) Wait(old uint32, d time.Duration) uint32 {
	if s := c.State(); s != old {
		return s
	}
	futexWait(c.word(), old, d)
	return c.State()
}

// Capacity is the size of the request and of the reply area.
func (c *Channel) Capacity() int { return c.n }

// RequestArea returns the request area, empty with room for Capacity bytes.
func (c *Channel) RequestArea() []byte { return c.mem[chanHeader : chanHeader : chanHeader+c.n] }

// ReplyArea returns the reply area, empty with room for Capacity bytes.
func (c *Channel) ReplyArea() []byte {
	o := chanHeader + c.n
	return c.mem[o : o : o+c.n]
}

// SetRequest records the length of the request written to RequestArea.
func (c *Channel) SetRequest(n int) { binary.LittleEndian.PutUint64(c.mem[8:], uint64(n)) }

// SetReply records the length of the reply written to ReplyArea.
func (c *Channel) SetReply(n int) { binary.LittleEndian.PutUint64(c.mem[16:], uint64(n)) }

// Request returns the posted request.
func (c *Channel) Request() ([]byte, error) {
	n := binary.LittleEndian.Uint64(c.mem[8:])
	if n > uint64(c.n) {
		return nil, fmt.Errorf("channel request of %d bytes exceeds its %d-byte area", n, c.n)
	}
	return c.mem[chanHeader : chanHeader+int(n)], nil
}

// Reply returns the posted reply.
func (c *Channel) Reply() ([]byte, error) {
	n := binary.LittleEndian.Uint64(c.mem[16:])
	if n > uint64(c.n) {
		return nil, fmt.Errorf("channel reply of %d bytes exceeds its %d-byte area", n, c.n)
	}
	o := chanHeader + c.n
	return c.mem[o : o+int(n)], nil
}

// Aliases reports whether b is the start of the area, i.e. an append to
// the area did not have to move elsewhere.
func Aliases(b, area []byte) bool {
	return len(b) > 0 && cap(area) > 0 && &b[0] == &area[:1][0]
}
