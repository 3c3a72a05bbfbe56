package sdk

import (
	"context"
	"fmt"
	"runtime"

	"github.com/weftrun/weft/plugins/internal/shm"
	"github.com/weftrun/weft/plugins/proto/pluginpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// OpenChannel starts serving Execute requests the engine posts to a
// shared-memory channel, on a thread of its own.
func (s *server) OpenChannel(_ context.Context, req *pluginpb.OpenChannelRequest) (*pluginpb.OpenChannelResponse, error) {
	if !shm.ChannelsSupported {
		return &pluginpb.OpenChannelResponse{Ok: false}, nil
	}
	seg := req.GetSegment()
	s.mu.Lock()
	mem, err := s.mapper.Map(seg.GetPath(), int(seg.GetSize()), false)
	s.mu.Unlock()
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ch, err := shm.NewChannel(mem[:seg.GetSize()])
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	go s.serveChannel(ch)
	return &pluginpb.OpenChannelResponse{Ok: true}, nil
}

// serveChannel answers the channel's requests until the engine closes it
// (or the process ends).
func (s *server) serveChannel(ch *shm.Channel) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		switch st := ch.State(); st {
		case shm.ChanRequest:
			s.answer(ch)
		case shm.ChanClosed:
			return
		default:
			ch.Wait(st, 0)
		}
	}
}

// answer runs the posted request and posts the reply.
func (s *server) answer(ch *shm.Channel) {
	reply := &pluginpb.ChannelReply{}
	data, err := ch.Request()
	req := &pluginpb.ExecuteRequest{}
	if err == nil {
		err = proto.Unmarshal(data, req)
	}
	if err == nil {
		reply.Response, err = s.Execute(context.Background(), req)
	} else {
		err = status.Errorf(codes.InvalidArgument, "channel request: %v", err)
	}
	if err != nil {
		st := status.Convert(err)
		reply = &pluginpb.ChannelReply{Code: uint32(st.Code()), Message: st.Message()}
	}
	area := ch.ReplyArea()
	out, err := proto.MarshalOptions{}.MarshalAppend(area, reply)
	if err != nil || len(out) > ch.Capacity() || len(out) > 0 && !shm.Aliases(out, area) {
		msg := fmt.Sprintf("reply of %d bytes does not fit the %d-byte channel", len(out), ch.Capacity())
		if err != nil {
			msg = err.Error()
		}
		out, _ = proto.MarshalOptions{}.MarshalAppend(area, &pluginpb.ChannelReply{Code: uint32(codes.ResourceExhausted), Message: msg})
	}
	ch.SetReply(len(out))
	ch.Set(shm.ChanReply)
}
