package s3store_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
	"github.com/agentui/agentui/files/s3store"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// gateway starts a real S3-compatible server, versitygw (an S3 gateway
// over a directory; `make test` builds it), on a free port, and returns a
// client of it.
func gateway(t *testing.T) *s3.Client {
	t.Helper()
	bin := os.Getenv("VERSITYGW")
	if bin == "" {
		bin, _ = exec.LookPath("versitygw")
	}
	if bin == "" {
		testutil.Missing(t, "versitygw not found: make test builds it (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0), or set VERSITYGW")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--port", addr, "--access", "agentui", "--secret", "agentui-test-secret", "--quiet", "posix", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	testutil.Eventually(t, 30*time.Second, "versitygw on "+addr+" to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://" + addr),
		UsePathStyle: true,
		Credentials:  aws.NewCredentialsCache(credentials{}),
	})
}

type credentials struct{}

func (credentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "agentui", SecretAccessKey: "agentui-test-secret"}, nil
}

// The S3 store keeps the contract every file store keeps, against a real
// S3-compatible server.
func TestStoreOnAnS3Server(t *testing.T) {
	client := gateway(t)
	n := 0
	filestest.Run(t, func(t *testing.T) files.Store {
		n++
		bucket := "agentui-test-" + strconv.Itoa(n)
		if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
			t.Fatal(err)
		}
		return s3store.New(client, bucket, "")
	})
}
