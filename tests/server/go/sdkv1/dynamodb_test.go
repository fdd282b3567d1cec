// Package sdkv1 runs the AWS SDK for Go v1 (Debian's golang-github-aws-aws-sdk-go-dev) against a
// SigV4-verifying `quarry serve`, changing nothing but the endpoint: a shorter pass than sdkv2
// (create and wait, items through dynamodbattribute, QueryPages, awserr codes for a failed
// condition and a cancelled transaction, the CRC32 check this SDK fails calls on, delete and
// wait). tests/server/test_go.py builds and runs it with QUARRY_ENDPOINT, QUARRY_KEY_ID and
// QUARRY_SECRET set. The tests run in file order and share the table the first one creates.
package sdkv1

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go/aws"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/credentials"
	"github.com/aws/aws-sdk-go/aws/request"
	"github.com/aws/aws-sdk-go/aws/session"
	"github.com/aws/aws-sdk-go/service/dynamodb"
	"github.com/aws/aws-sdk-go/service/dynamodb/dynamodbattribute"
	"github.com/aws/aws-sdk-go/service/dynamodb/expression"
)

const (
	table     = "go_v1_main"
	bigNumber = "-98765432109876543210987654321098765.432"
)

var (
	svc *dynamodb.DynamoDB
	ctx = context.Background()
)

func newService(tweak func(*aws.Config)) *dynamodb.DynamoDB {
	cfg := &aws.Config{
		Endpoint:    aws.String(os.Getenv("QUARRY_ENDPOINT")),
		Region:      aws.String("us-east-1"),
		Credentials: credentials.NewStaticCredentials(os.Getenv("QUARRY_KEY_ID"), os.Getenv("QUARRY_SECRET"), ""),
	}
	if tweak != nil {
		tweak(cfg)
	}
	return dynamodb.New(session.Must(session.NewSession(cfg)))
}

func TestMain(m *testing.M) {
	if os.Getenv("QUARRY_ENDPOINT") == "" || os.Getenv("QUARRY_KEY_ID") == "" || os.Getenv("QUARRY_SECRET") == "" {
		fmt.Fprintln(os.Stderr, "QUARRY_ENDPOINT, QUARRY_KEY_ID and QUARRY_SECRET must be set")
		os.Exit(2)
	}
	svc = newService(nil)
	os.Exit(m.Run())
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func waitDelay() request.WaiterOption {
	return request.WithWaiterDelay(request.ConstantWaiterDelay(100 * time.Millisecond))
}

type Order struct {
	Customer string                   `dynamodbav:"customer"`
	OrderID  int                      `dynamodbav:"order_id"`
	Total    dynamodbattribute.Number `dynamodbav:"total"`
	Lines    []Line                   `dynamodbav:"lines"`
	Labels   []string                 `dynamodbav:"labels,stringset"`
	Sizes    []float64                `dynamodbav:"sizes,numberset"`
	Receipt  []byte                   `dynamodbav:"receipt"`
	Shipped  bool                     `dynamodbav:"shipped"`
	Note     *string                  `dynamodbav:"note"`
	Meta     map[string]string        `dynamodbav:"meta"`
}

type Line struct {
	SKU string
	Qty int
}

func key(customer string, id int) map[string]*dynamodb.AttributeValue {
	return map[string]*dynamodb.AttributeValue{
		"customer": {S: aws.String(customer)},
		"order_id": {N: aws.String(fmt.Sprint(id))},
	}
}

func TestCreateTableAndWait(t *testing.T) {
	_, err := svc.CreateTableWithContext(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []*dynamodb.AttributeDefinition{
			{AttributeName: aws.String("customer"), AttributeType: aws.String("S")},
			{AttributeName: aws.String("order_id"), AttributeType: aws.String("N")},
		},
		KeySchema: []*dynamodb.KeySchemaElement{
			{AttributeName: aws.String("customer"), KeyType: aws.String("HASH")},
			{AttributeName: aws.String("order_id"), KeyType: aws.String("RANGE")},
		},
		ProvisionedThroughput: &dynamodb.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)},
	})
	must(t, err, "CreateTable")
	must(t, svc.WaitUntilTableExistsWithContext(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, waitDelay()),
		"WaitUntilTableExists")
	d, err := svc.DescribeTableWithContext(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	must(t, err, "DescribeTable")
	if aws.StringValue(d.Table.TableStatus) != "ACTIVE" ||
		aws.Int64Value(d.Table.ProvisionedThroughput.ReadCapacityUnits) != 5 {
		t.Fatalf("table: %v", d.Table)
	}
}

func TestPutGetUpdate(t *testing.T) {
	in := Order{
		Customer: "c1", OrderID: 1, Total: bigNumber,
		Lines:   []Line{{"sku-1", 2}, {"sku-2", 1}},
		Labels:  []string{"gift", "express"},
		Sizes:   []float64{1.5, 42},
		Receipt: []byte("\x00receipt\xff"),
		Shipped: false,
		Meta:    map[string]string{"channel": "web", "empty": ""},
	}
	item, err := dynamodbattribute.MarshalMap(in)
	must(t, err, "MarshalMap")
	_, err = svc.PutItemWithContext(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	must(t, err, "PutItem")
	g, err := svc.GetItemWithContext(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("c1", 1), ConsistentRead: aws.Bool(true)})
	must(t, err, "GetItem")
	if aws.StringValue(g.Item["total"].N) != bigNumber || g.Item["note"].NULL == nil || !*g.Item["note"].NULL {
		t.Fatalf("wire values: total %v note %v", g.Item["total"], g.Item["note"])
	}
	var out Order
	must(t, dynamodbattribute.UnmarshalMap(g.Item, &out), "UnmarshalMap")
	sort.Strings(out.Labels)
	sort.Float64s(out.Sizes)
	want := in
	want.Labels = []string{"express", "gift"}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", out, want)
	}

	upd := expression.Set(expression.Name("shipped"), expression.Value(true)).
		Set(expression.Name("lines[0].Qty"), expression.Name("lines[0].Qty").Plus(expression.Value(3))).
		Set(expression.Name("meta.carrier"), expression.Value("post")).
		Delete(expression.Name("labels"), expression.Value(&dynamodb.AttributeValue{SS: aws.StringSlice([]string{"gift"})}))
	cond := expression.Name("shipped").Equal(expression.Value(false))
	e, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	must(t, err, "Build")
	u, err := svc.UpdateItemWithContext(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key("c1", 1), UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(), ReturnValues: aws.String("ALL_NEW"),
	})
	must(t, err, "UpdateItem")
	var after Order
	must(t, dynamodbattribute.UnmarshalMap(u.Attributes, &after), "UnmarshalMap ALL_NEW")
	if !after.Shipped || after.Lines[0].Qty != 5 || after.Meta["carrier"] != "post" ||
		!reflect.DeepEqual(after.Labels, []string{"express"}) || string(after.Total) != bigNumber {
		t.Fatalf("after update: %#v", after)
	}

	// The same update again: shipped is now true, so the condition fails.
	_, err = svc.UpdateItemWithContext(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key("c1", 1), UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
	})
	aerr, ok := err.(awserr.Error)
	if !ok || aerr.Code() != dynamodb.ErrCodeConditionalCheckFailedException || aerr.Message() != "The conditional request failed" {
		t.Fatalf("want ConditionalCheckFailedException, got %v", err)
	}
	if rf, ok := err.(awserr.RequestFailure); !ok || rf.StatusCode() != 400 || rf.RequestID() == "" {
		t.Fatalf("want a RequestFailure with status 400 and a request id, got %v", err)
	}
}

func TestQueryPages(t *testing.T) {
	var reqs []*dynamodb.WriteRequest
	for i := 1; i <= 25; i++ {
		item, err := dynamodbattribute.MarshalMap(map[string]interface{}{
			"customer": "c2", "order_id": i, "pad": strings.Repeat("p", 300), "odd": i%2 == 1,
		})
		must(t, err, "MarshalMap")
		reqs = append(reqs, &dynamodb.WriteRequest{PutRequest: &dynamodb.PutRequest{Item: item}})
	}
	b, err := svc.BatchWriteItemWithContext(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]*dynamodb.WriteRequest{table: reqs}})
	must(t, err, "BatchWriteItem")
	if len(b.UnprocessedItems) != 0 {
		t.Fatalf("unprocessed: %v", b.UnprocessedItems)
	}
	e, err := expression.NewBuilder().
		WithKeyCondition(expression.Key("customer").Equal(expression.Value("c2")).And(expression.Key("order_id").GreaterThan(expression.Value(3)))).
		WithFilter(expression.Name("odd").Equal(expression.Value(true))).
		WithProjection(expression.NamesList(expression.Name("order_id"))).Build()
	must(t, err, "Build")
	var ids []int
	pages, scanned := 0, int64(0)
	err = svc.QueryPagesWithContext(ctx, &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: e.KeyCondition(), FilterExpression: e.Filter(),
		ProjectionExpression: e.Projection(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		Limit: aws.Int64(4), ScanIndexForward: aws.Bool(false),
	}, func(page *dynamodb.QueryOutput, last bool) bool {
		pages++
		scanned += aws.Int64Value(page.ScannedCount)
		var rows []struct {
			ID int `dynamodbav:"order_id"`
		}
		if err := dynamodbattribute.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			t.Errorf("UnmarshalListOfMaps: %v", err)
			return false
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return pages < 20
	})
	must(t, err, "QueryPages")
	// Keys 4..25 read four at a time: 22 items, so five full pages and a sixth of two.
	if pages != 6 || scanned != 22 || !reflect.DeepEqual(ids, []int{25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5}) {
		t.Fatalf("QueryPages: %d pages, scanned %d, ids %v", pages, scanned, ids)
	}
}

func TestTransactionCancelled(t *testing.T) {
	_, err := svc.TransactWriteItemsWithContext(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []*dynamodb.TransactWriteItem{
		{Put: &dynamodb.Put{TableName: aws.String(table), Item: key("c3", 1), ConditionExpression: aws.String("attribute_not_exists(customer)")}},
		{Delete: &dynamodb.Delete{TableName: aws.String(table), Key: key("c2", 5)}},
		{Update: &dynamodb.Update{
			TableName: aws.String(table), Key: key("c1", 1), UpdateExpression: aws.String("SET shipped = :f"),
			ConditionExpression:       aws.String("shipped = :f"),
			ExpressionAttributeValues: map[string]*dynamodb.AttributeValue{":f": {BOOL: aws.Bool(false)}},
		}},
	}})
	tce, ok := err.(*dynamodb.TransactionCanceledException)
	if !ok {
		t.Fatalf("want *dynamodb.TransactionCanceledException, got %T %v", err, err)
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.StringValue(r.Code))
	}
	if tce.Code() != "TransactionCanceledException" || !reflect.DeepEqual(codes, []string{"None", "None", "ConditionalCheckFailed"}) {
		t.Fatalf("cancelled transaction: %s %v", tce.Code(), codes)
	}
	if !strings.Contains(tce.Message(), "[None, None, ConditionalCheckFailed]") {
		t.Fatalf("message %q", tce.Message())
	}
	// Nothing was written: c3/1 absent, c2/5 still there.
	g, err := svc.BatchGetItemWithContext(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]*dynamodb.KeysAndAttributes{
		table: {Keys: []map[string]*dynamodb.AttributeValue{key("c3", 1), key("c2", 5)}, ConsistentRead: aws.Bool(true)},
	}})
	must(t, err, "BatchGetItem")
	if got := g.Responses[table]; len(got) != 1 || aws.StringValue(got[0]["customer"].S) != "c2" {
		t.Fatalf("after the cancelled transaction: %v", got)
	}
}

func TestChecksumIsChecked(t *testing.T) {
	// Every call above passed this SDK's CRC32 check; this one shows the check is there: a
	// handler ahead of it replaces the header with a wrong value.
	bad := newService(func(c *aws.Config) { c.MaxRetries = aws.Int(0) })
	bad.Handlers.Unmarshal.PushFront(func(r *request.Request) {
		if r.HTTPResponse.Header.Get("X-Amz-Crc32") == "" {
			t.Errorf("response without x-amz-crc32")
		}
		r.HTTPResponse.Header.Set("X-Amz-Crc32", "1")
	})
	_, err := bad.GetItemWithContext(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("c1", 1)})
	if aerr, ok := err.(awserr.Error); !ok || aerr.Code() != "CRC32CheckFailed" {
		t.Fatalf("want CRC32CheckFailed, got %v", err)
	}
}

func TestDeleteTableAndWait(t *testing.T) {
	_, err := svc.DeleteTableWithContext(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	must(t, err, "DeleteTable")
	must(t, svc.WaitUntilTableNotExistsWithContext(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, waitDelay()),
		"WaitUntilTableNotExists")
	_, err = svc.DescribeTableWithContext(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if aerr, ok := err.(awserr.Error); !ok || aerr.Code() != dynamodb.ErrCodeResourceNotFoundException {
		t.Fatalf("DescribeTable after delete: %v", err)
	}
}
