// Package local delivers events under make run as the deployed pipe does:
// a Follower reads the outbox table's stream on DynamoDB Local, and a
// Sender posts each event to EVENTS_URL.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/quire"
)

// pollEvery is how often a Follower asks the stream for new records.
const pollEvery = 200 * time.Millisecond

// A Follower reads the new items of an outbox table's stream, as the
// deployed pipe does: each shard in order, the events from the moment it
// was made on.
type Follower struct {
	streams *dynamodbstreams.Client
	arn     string
	// iterators holds the next iterator of each shard being read, by
	// shard id; a shard read to its end has none, and is not read again.
	iterators map[string]*string
	// last holds the sequence number of the last record read of each
	// shard being read: an iterator that expired (the machine slept for
	// 15 minutes) is taken again after it.
	last map[string]string
	done map[string]bool
}

// NewFollower returns a Follower of the stream arn whose records start
// now: every event committed after it returns is delivered, none before.
func NewFollower(ctx context.Context, streams *dynamodbstreams.Client, arn string) (*Follower, error) {
	f := &Follower{streams: streams, arn: arn, iterators: map[string]*string{}, last: map[string]string{}, done: map[string]bool{}}
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
// order, until ctx is done. A record it cannot read is logged and passed
// over; a stream that fails is asked again after a pause.
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

// poll reads each shard once, and looks for new shards.
func (f *Follower) poll(ctx context.Context, deliver func(quire.Event)) error {
	for id, it := range f.iterators {
		out, err := f.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
		if _, expired := errors.AsType[*types.ExpiredIteratorException](err); expired {
			err = f.resume(ctx, id)
		}
		if err != nil {
			return fmt.Errorf("read the outbox's stream, shard %s: %w", id, err)
		}
		if out == nil {
			continue // resumed: read on the next poll
		}
		for _, r := range out.Records {
			if r.Dynamodb != nil && r.Dynamodb.SequenceNumber != nil {
				f.last[id] = *r.Dynamodb.SequenceNumber
			}
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
			deliver(ev)
		}
		if out.NextShardIterator == nil {
			delete(f.iterators, id)
			delete(f.last, id)
			f.done[id] = true
		} else {
			f.iterators[id] = out.NextShardIterator
		}
	}
	return f.discover(ctx, types.ShardIteratorTypeTrimHorizon)
}

// resume takes shard id's expired iterator again after the last record
// read, so that no event is delivered twice. With none read, discover reads
// the shard again from its start: an event may then come twice, and none is
// lost. When the new iterator cannot be had, the expired one stays, and the
// next poll resumes again.
func (f *Follower) resume(ctx context.Context, id string) error {
	seq, ok := f.last[id]
	if !ok {
		delete(f.iterators, id)
		return nil
	}
	it, err := f.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: &f.arn, ShardId: &id, ShardIteratorType: types.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: &seq,
	})
	if err != nil {
		return err
	}
	f.iterators[id] = it.ShardIterator
	return nil
}
