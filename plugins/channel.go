package plugins

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// channelSize is the size of a plugin's shared-memory channel: requests
// and replies carry references and small inline tensors only.
const channelSize = 1 << 20

// hostChannel is the engine's end of a plugin's shared-memory channel.
type hostChannel struct {
	seg *shm.Segment
	ch  *shm.Channel

	busy sync.Mutex   // held by the call using the channel
	life sync.RWMutex // read-held while the memory is in use; Close write-locks
	dead bool         // unmapped (life held)
}

// openChannel offers a channel to a newly started process; on any failure
// the process is served through Execute alone.
func (p *proc) openChannel(c *conn) {
	if !shm.ChannelsSupported || p.h.opt.GRPCOnly {
		return
	}
	seg, err := shm.Create(p.h.shmDirs, p.name+"-chan", 0, channelSize)
	if err != nil {
		p.logf("no shared-memory channel: %v", err)
		return
	}
	ch, err := shm.NewChannel(seg.Bytes())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), p.h.opt.CallTimeout)
		var resp *pluginpb.OpenChannelResponse
		resp, err = c.rpc.OpenChannel(ctx, &pluginpb.OpenChannelRequest{Segment: &pluginpb.Segment{Path: seg.Path(), Size: uint64(seg.Size())}})
		cancel()
		if err == nil && resp.GetOk() {
			c.ch = &hostChannel{seg: seg, ch: ch}
			return
		}
		if status.Code(err) == codes.Unimplemented {
			err = nil // a plugin built without channels
		}
	}
	if err != nil {
		p.logf("no shared-memory channel: %v", err)
	}
	seg.Close()
}

// call sends req through the channel. used is false when the channel was
// busy or the request too large for it: the caller then uses Execute.
// Errors are gRPC statuses, as Execute's would be.
func (h *hostChannel) call(ctx context.Context, c *conn, req *pluginpb.ExecuteRequest) (resp *pluginpb.ExecuteResponse, used bool, err error) {
	if !h.busy.TryLock() {
		return nil, false, nil
	}
	h.life.RLock()
	defer h.life.RUnlock()
	if h.dead {
		return nil, false, nil // the lock stays held: the channel is gone
	}
	area := h.ch.RequestArea()
	out, err := proto.MarshalOptions{}.MarshalAppend(area, req)
	if err != nil || len(out) > h.ch.Capacity() || len(out) > 0 && !shm.Aliases(out, area) {
		h.busy.Unlock()
		return nil, false, nil
	}
	h.ch.SetRequest(len(out))
	h.ch.Set(shm.ChanRequest)
	for {
		st := h.ch.Wait(shm.ChanRequest, 5*time.Millisecond)
		if st == shm.ChanReply {
			break
		}
		if st != shm.ChanRequest {
			// Left locked: the channel is in an unknown state.
			return nil, true, status.Errorf(codes.Unavailable, "shared-memory channel in state %d", st)
		}
		if err := ctx.Err(); err != nil {
			// The plugin is still running the request: retire the
			// channel (left locked) rather than wait for it.
			return nil, true, status.FromContextError(err).Err()
		}
		if c.client.Exited() {
			return nil, true, status.Error(codes.Unavailable, "the plugin process exited")
		}
	}
	data, err := h.ch.Reply()
	var rp pluginpb.ChannelReply
	if err == nil {
		err = proto.Unmarshal(data, &rp)
	}
	h.ch.CompareAndSet(shm.ChanReply, shm.ChanIdle)
	h.busy.Unlock()
	if err != nil {
		return nil, true, status.Errorf(codes.Internal, "shared-memory channel reply: %v", err)
	}
	if rp.GetCode() != 0 {
		return nil, true, status.Error(codes.Code(rp.GetCode()), rp.GetMessage())
	}
	if rp.GetResponse() == nil {
		return nil, true, status.Error(codes.Internal, "empty shared-memory channel reply")
	}
	return rp.GetResponse(), true, nil
}

// close unmaps the channel once no call uses its memory. Call it after
// the process is dead, so that calls waiting on it give up.
func (h *hostChannel) close() error {
	h.life.Lock()
	defer h.life.Unlock()
	if h.dead {
		return nil
	}
	h.dead = true
	if err := h.seg.Close(); err != nil {
		return fmt.Errorf("close channel: %w", err)
	}
	return nil
}
