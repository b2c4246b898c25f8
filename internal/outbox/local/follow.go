// Package local delivers events under make run as the deployed pipe does:
// a Follower reads the outbox table's stream on DynamoDB Local, and a
// Sender posts each event to EVENTS_URL.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/quire"
)

// pollEvery is how often a Follower asks the stream for new records.
const pollEvery = 200 * time.Millisecond

// An Outbox reads the outbox table: every event it holds, in the order of
// their time, then id (dynamo.EventStore).
type Outbox interface {
	Events(ctx context.Context) ([]quire.Event, error)
}

// A Follower reads the new items of an outbox table's stream, as the
// deployed pipe does: each shard in order, the events from the moment it
// was made on. What the stream no longer holds (it keeps a record 24
// hours; an iterator unused for 15 minutes expires), and what was
// committed before a restart, it reads from the outbox table, which keeps
// each event 7 days.
type Follower struct {
	streams *dynamodbstreams.Client
	arn     string
	outbox  Outbox
	// handed names the events handed on; behind says that the stream may
	// not hold every later one: the next poll reads the outbox table for
	// those handed does not name, and the stream from its end on.
	handed Checkpoint
	behind bool
	// iterators holds the next iterator of each shard being read, by
	// shard id; a shard read to its end has none, and is not read again.
	iterators map[string]*string
	done      map[string]bool
}

// NewFollower returns a Follower of the stream arn, of the table outbox
// reads. With from nil, its records start now: every event committed
// after it returns is delivered, none before. With from (which it
// copies), it delivers first the events of the outbox table that from
// does not name, in the order of their time, then the stream's: every
// event from does not name, and none it does.
func NewFollower(ctx context.Context, streams *dynamodbstreams.Client, arn string, outbox Outbox, from *Checkpoint) (*Follower, error) {
	f := &Follower{streams: streams, arn: arn, outbox: outbox, handed: NewCheckpoint(time.Now()),
		iterators: map[string]*string{}, done: map[string]bool{}}
	if from != nil {
		f.handed = Checkpoint{Before: from.Before, Delivered: maps.Clone(from.Delivered)}
		f.behind = true
	}
	if err := f.discover(ctx, types.ShardIteratorTypeLatest); err != nil {
		return nil, err
	}
	return f, nil
}

// discover starts reading each shard of the stream not read yet, at
// position: the open shards from now on (LATEST) when the Follower is
// made, and from their start (TRIM_HORIZON) every shard that opens later.
func (f *Follower) discover(ctx context.Context, position types.ShardIteratorType) error {
	var start *string
	for {
		out, err := f.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &f.arn, ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("describe the outbox's stream: %w", err)
		}
		for _, s := range out.StreamDescription.Shards {
			id := aws.ToString(s.ShardId)
			if _, reading := f.iterators[id]; reading || f.done[id] {
				continue
			}
			if position == types.ShardIteratorTypeLatest && s.SequenceNumberRange != nil && s.SequenceNumberRange.EndingSequenceNumber != nil {
				f.done[id] = true // closed before now: nothing new comes
				continue
			}
			it, err := f.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: &f.arn, ShardId: s.ShardId, ShardIteratorType: position,
			})
			if err != nil {
				return fmt.Errorf("read the outbox's stream, shard %s: %w", id, err)
			}
			f.iterators[id] = it.ShardIterator
		}
		if start = out.StreamDescription.LastEvaluatedShardId; start == nil {
			return nil
		}
	}
}

// Run hands each event of a new outbox item to deliver, in the stream's
// order, until ctx is done; those it reads from the outbox table, in the
// order of their time. A record it cannot read is logged and passed over;
// a stream that fails is asked again after a pause.
func (f *Follower) Run(ctx context.Context, deliver func(quire.Event)) {
	for {
		if err := f.poll(ctx, deliver); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "reading the outbox's stream failed; trying again", "err", err)
			if sleep(ctx, time.Second) != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
	}
}

// poll reads each shard once, and looks for new shards. When the stream
// has lost its place (an iterator expired, or the records after it were
// trimmed), it catches up from the outbox table instead.
func (f *Follower) poll(ctx context.Context, deliver func(quire.Event)) error {
	if f.behind {
		return f.catchUp(ctx, deliver)
	}
	for id, it := range f.iterators {
		out, err := f.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
		_, expired := errors.AsType[*types.ExpiredIteratorException](err)
		_, trimmed := errors.AsType[*types.TrimmedDataAccessException](err)
		if expired || trimmed {
			f.behind = true
			return f.catchUp(ctx, deliver)
		}
		if err != nil {
			return fmt.Errorf("read the outbox's stream, shard %s: %w", id, err)
		}
		for _, r := range out.Records {
			if r.EventName != types.OperationTypeInsert || r.Dynamodb == nil {
				continue // an event's item expiring
			}
			s, ok := r.Dynamodb.NewImage[outbox.Attribute].(*types.AttributeValueMemberS)
			if !ok {
				slog.WarnContext(ctx, "an outbox item without its event passed over", "sequence_number", aws.ToString(r.Dynamodb.SequenceNumber))
				continue
			}
			ev, err := outbox.Decode(s.Value)
			if err != nil {
				slog.WarnContext(ctx, "an outbox item passed over", "err", err)
				continue
			}
			if f.handed.has(ev.ID) {
				continue // read from the outbox table, on catching up
			}
			f.handed.Add(ev)
			deliver(ev)
		}
		if out.NextShardIterator == nil {
			delete(f.iterators, id)
			f.done[id] = true
		} else {
			f.iterators[id] = out.NextShardIterator
		}
	}
	return f.discover(ctx, types.ShardIteratorTypeTrimHorizon)
}

// catchUp reads the stream from its end on (LATEST), then hands on, in the
// order of their time, the events of the outbox table not handed on yet:
// every event is in one or the other, and one committed in between, in
// both, comes once. It is simpler than taking up the stream after its last
// record read, and it is right where that is not: a record trimmed, or one
// committed before a restart. Until it has read the whole table, the next
// poll catches up again.
func (f *Follower) catchUp(ctx context.Context, deliver func(quire.Event)) error {
	f.iterators = map[string]*string{}
	if err := f.discover(ctx, types.ShardIteratorTypeLatest); err != nil {
		return err
	}
	events, err := f.outbox.Events(ctx)
	if err != nil {
		return err
	}
	for _, ev := range events {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if f.handed.pending(ev) {
			f.handed.Add(ev)
			deliver(ev)
		}
	}
	f.behind = false
	return nil
}
