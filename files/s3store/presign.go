package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/agentui/agentui/files"
)

var _ files.Presigner = (*Store)(nil)

// stagingDir is scope's prefix for uploads not yet finalized. WithExpiry's
// sweep removes those never finalized (without it, a bucket lifecycle rule
// on "<prefix>staging/" can).
func (s *Store) stagingDir(scope string) string {
	return s.prefix + "staging/" + strings.TrimPrefix(s.scopeDir(scope), s.prefix)
}

// PresignUpload signs a PUT of exactly size bytes of contentType to a
// fresh staging key of scope's.
func (s *Store) PresignUpload(ctx context.Context, scope, contentType string, size int64, ttl time.Duration) (files.PresignedUpload, error) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := s.stagingDir(scope) + hex.EncodeToString(nonce[:])
	req, err := s3.NewPresignClient(s.client).PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, ContentType: aws.String(contentType), ContentLength: aws.Int64(size),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return files.PresignedUpload{}, fmt.Errorf("s3store: %w", err)
	}
	headers := map[string]string{}
	for k, vs := range req.SignedHeader {
		if k != "Host" && len(vs) > 0 {
			headers[k] = vs[0]
		}
	}
	return files.PresignedUpload{URL: req.URL, Key: key, Headers: headers, Expires: time.Now().Add(ttl)}, nil
}

// OpenStaged returns the bytes put at scope's staging key.
func (s *Store) OpenStaged(ctx context.Context, scope, key string) (io.ReadCloser, error) {
	if !strings.HasPrefix(key, s.stagingDir(scope)) || strings.Contains(key, "..") {
		return nil, files.ErrNotFound
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if notFound(err) {
		return nil, files.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	return out.Body, nil
}

// DeleteStaged removes a staged upload.
func (s *Store) DeleteStaged(ctx context.Context, scope, key string) error {
	if !strings.HasPrefix(key, s.stagingDir(scope)) {
		return files.ErrNotFound
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("s3store: %w", err)
	}
	return nil
}
