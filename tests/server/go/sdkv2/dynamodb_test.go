// Package sdkv2 runs the AWS SDK for Go v2 (Debian's golang-github-aws-aws-sdk-go-v2-dev) against
// a SigV4-verifying `quarry serve`, changing nothing but the endpoint: tables with indexes and the
// waiters, items through attributevalue and the expression builder, typed errors, paginators,
// batches, transactions, table settings, the response checksum with and without gzip, and the
// errors for a wrong secret or an unknown key. tests/server/test_go.py builds and runs it with
// QUARRY_ENDPOINT, QUARRY_KEY_ID and QUARRY_SECRET set. The tests run in file order and share
// the tables the first ones create.
package sdkv2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

const (
	mainTable = "go_v2_main"
	// 38 significant digits, DynamoDB's limit for a number: it must come back digit for digit.
	bigNumber  = "12345678901234567890123456789012345678"
	fineNumber = "-0.00000000000000000000000000000000000000012345678901234567890123456789012345678"
)

var (
	endpoint string
	keyID    string
	secret   string
	client   *dynamodb.Client
	ctx      = context.Background()
)

func TestMain(m *testing.M) {
	endpoint = os.Getenv("QUARRY_ENDPOINT")
	keyID = os.Getenv("QUARRY_KEY_ID")
	secret = os.Getenv("QUARRY_SECRET")
	if endpoint == "" || keyID == "" || secret == "" {
		fmt.Fprintln(os.Stderr, "QUARRY_ENDPOINT, QUARRY_KEY_ID and QUARRY_SECRET must be set")
		os.Exit(2)
	}
	client = newClient(keyID, secret, nil)
	os.Exit(m.Run())
}

// newClient is what an application would write, with the endpoint pointed at quarry.
func newClient(key, sec string, tweak func(*dynamodb.Options)) *dynamodb.Client {
	opts := dynamodb.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider(key, sec, ""),
		EndpointResolver: dynamodb.EndpointResolverFromURL(endpoint),
	}
	if tweak != nil {
		tweak(&opts)
	}
	return dynamodb.New(opts)
}

// Inner nests lists and maps of mixed types inside Record.
type Inner struct {
	Label string
	Depth int
	Items []interface{}
	Props map[string]interface{}
}

// Record uses every kind of attribute the marshaller produces.
type Record struct {
	PK      string                `dynamodbav:"pk"`
	SK      string                `dynamodbav:"sk"`
	Kind    string                `dynamodbav:"kind,omitempty"`
	Rank    int                   `dynamodbav:"rank"`
	Name    string                `dynamodbav:"name"`
	Count   int64                 `dynamodbav:"count"`
	Ratio   float64               `dynamodbav:"ratio"`
	Big     attributevalue.Number `dynamodbav:"big"`
	Fine    attributevalue.Number `dynamodbav:"fine"`
	Active  bool                  `dynamodbav:"active"`
	Nothing *string               `dynamodbav:"nothing"`
	Blob    []byte                `dynamodbav:"blob"`
	Tags    []string              `dynamodbav:"tags,stringset"`
	Scores  []int                 `dynamodbav:"scores,numberset"`
	Blobs   [][]byte              `dynamodbav:"blobs,binaryset"`
	Inner   Inner                 `dynamodbav:"inner"`
	Matrix  [][]int               `dynamodbav:"matrix"`
	Created time.Time             `dynamodbav:"created,unixtime"`
}

func sampleRecord() Record {
	return Record{
		PK: "user#1", SK: "profile", Kind: "user", Rank: 7, Name: "Ada Lovelace ✓",
		Count: 41, Ratio: 0.125, Big: bigNumber, Fine: fineNumber, Active: true,
		Blob:   []byte{0, 1, 2, 254, 255},
		Tags:   []string{"alpha", "beta"},
		Scores: []int{3, 1, 2},
		Blobs:  [][]byte{{1}, {2, 3}},
		Inner: Inner{
			Label: "outer", Depth: 2,
			Items: []interface{}{"s", 1.5, true, nil, []interface{}{"deep"}, map[string]interface{}{"k": "v"}},
			Props: map[string]interface{}{"a": "x", "n": 10.0, "list": []interface{}{1.0, 2.0}},
		},
		Matrix:  [][]int{{1, 2}, {3}},
		Created: time.Unix(1700000000, 0).UTC(),
	}
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mainKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

func sortedStrings(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func TestCreateTableWithIndexesAndWait(t *testing.T) {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(mainTable),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("kind"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("rank"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("by_kind"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("kind"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("rank"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{
			IndexName: aws.String("by_rank"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("rank"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{
				ProjectionType:   types.ProjectionTypeInclude,
				NonKeyAttributes: []string{"name"},
			},
		}},
		BillingMode: types.BillingModePayPerRequest,
	})
	must(t, err, "CreateTable")
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 500 * time.Millisecond
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(mainTable)}, 20*time.Second)
	must(t, err, "TableExistsWaiter")
	d := out.Table
	if d.TableStatus != types.TableStatusActive || aws.ToString(d.TableName) != mainTable {
		t.Fatalf("waiter returned %s %s", aws.ToString(d.TableName), d.TableStatus)
	}
	if len(d.GlobalSecondaryIndexes) != 1 || aws.ToString(d.GlobalSecondaryIndexes[0].IndexName) != "by_kind" ||
		d.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusActive {
		t.Fatalf("GSI: %+v", d.GlobalSecondaryIndexes)
	}
	if len(d.LocalSecondaryIndexes) != 1 || aws.ToString(d.LocalSecondaryIndexes[0].IndexName) != "by_rank" ||
		!reflect.DeepEqual(d.LocalSecondaryIndexes[0].Projection.NonKeyAttributes, []string{"name"}) {
		t.Fatalf("LSI: %+v", d.LocalSecondaryIndexes)
	}
}

func TestMarshalledItemRoundTrip(t *testing.T) {
	rec := sampleRecord()
	item, err := attributevalue.MarshalMap(rec)
	must(t, err, "MarshalMap")
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(mainTable), Item: item})
	must(t, err, "PutItem")

	got, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(mainTable), Key: mainKey("user#1", "profile"), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	must(t, err, "GetItem")
	// A strongly consistent read of an item under 4 KB costs one read unit.
	if cc := got.ConsumedCapacity; cc == nil || aws.ToString(cc.TableName) != mainTable || aws.ToFloat64(cc.CapacityUnits) != 1 {
		t.Fatalf("ConsumedCapacity %+v", cc)
	}
	if len(got.Item) != len(item) {
		t.Fatalf("GetItem returned %d attributes, put %d", len(got.Item), len(item))
	}
	// The wire values themselves: numbers digit for digit, sets as sets, binary exact.
	if n := got.Item["big"].(*types.AttributeValueMemberN).Value; n != bigNumber {
		t.Fatalf("38-digit number came back as %s", n)
	}
	if n := got.Item["fine"].(*types.AttributeValueMemberN).Value; n != fineNumber {
		t.Fatalf("small 38-digit number came back as %s", n)
	}
	if _, ok := got.Item["nothing"].(*types.AttributeValueMemberNULL); !ok {
		t.Fatalf("nil pointer should be NULL, got %#v", got.Item["nothing"])
	}
	if ss := got.Item["tags"].(*types.AttributeValueMemberSS).Value; !reflect.DeepEqual(sortedStrings(ss), []string{"alpha", "beta"}) {
		t.Fatalf("string set: %v", ss)
	}
	if ns := got.Item["scores"].(*types.AttributeValueMemberNS).Value; !reflect.DeepEqual(sortedStrings(ns), []string{"1", "2", "3"}) {
		t.Fatalf("number set: %v", ns)
	}
	if bs := got.Item["blobs"].(*types.AttributeValueMemberBS).Value; len(bs) != 2 {
		t.Fatalf("binary set: %v", bs)
	}
	if b := got.Item["blob"].(*types.AttributeValueMemberB).Value; !bytes.Equal(b, rec.Blob) {
		t.Fatalf("binary: %v", b)
	}
	if n := got.Item["created"].(*types.AttributeValueMemberN).Value; n != "1700000000" {
		t.Fatalf("unixtime: %s", n)
	}

	var back Record
	must(t, attributevalue.UnmarshalMap(got.Item, &back), "UnmarshalMap")
	// Sets come back in any order; compare them sorted, the rest exactly.
	sort.Strings(back.Tags)
	sort.Ints(back.Scores)
	sort.Slice(back.Blobs, func(i, j int) bool { return len(back.Blobs[i]) < len(back.Blobs[j]) })
	want := rec
	sort.Ints(want.Scores)
	back.Created = back.Created.UTC()
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("round trip differs:\n got %#v\nwant %#v", back, want)
	}
}

func TestExpressionBuilderUpdateAndCondition(t *testing.T) {
	update := expression.Set(expression.Name("count"), expression.Name("count").Plus(expression.Value(1))).
		Set(expression.Name("inner.Label"), expression.Value("renamed")).
		Set(expression.Name("matrix"), expression.Name("matrix").ListAppend(expression.Value([][]int{{9}}))).
		Set(expression.Name("visits"), expression.Name("visits").IfNotExists(expression.Value(100))).
		Add(expression.Name("tags"), expression.Value(types.AttributeValueMemberSS{Value: []string{"gamma"}})).
		Delete(expression.Name("scores"), expression.Value(types.AttributeValueMemberNS{Value: []string{"2"}})).
		Remove(expression.Name("nothing"))
	cond := expression.Name("count").Equal(expression.Value(41)).
		And(expression.Name("tags").Contains("alpha")).
		And(expression.Name("name").BeginsWith("Ada")).
		And(expression.Name("inner.Depth").Between(expression.Value(1), expression.Value(3))).
		And(expression.Name("nothing").AttributeType(expression.Null))
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
	must(t, err, "expression Build")
	out, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(mainTable), Key: mainKey("user#1", "profile"),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	must(t, err, "UpdateItem")
	var upd struct {
		Count  int64    `dynamodbav:"count"`
		Visits int      `dynamodbav:"visits"`
		Tags   []string `dynamodbav:"tags,stringset"`
		Scores []int    `dynamodbav:"scores,numberset"`
		Matrix [][]int  `dynamodbav:"matrix"`
		Inner  struct{ Label string }
	}
	must(t, attributevalue.UnmarshalMap(out.Attributes, &upd), "UnmarshalMap UPDATED_NEW")
	sort.Strings(upd.Tags)
	sort.Ints(upd.Scores)
	if upd.Count != 42 || upd.Visits != 100 || !reflect.DeepEqual(upd.Tags, []string{"alpha", "beta", "gamma"}) ||
		!reflect.DeepEqual(upd.Scores, []int{1, 3}) || !reflect.DeepEqual(upd.Matrix, [][]int{{1, 2}, {3}, {9}}) ||
		upd.Inner.Label != "renamed" {
		t.Fatalf("UPDATED_NEW: %+v", upd)
	}
	if _, still := out.Attributes["nothing"]; still {
		t.Fatalf("removed attribute returned in UPDATED_NEW")
	}
	if _, ok := out.Attributes["name"]; ok {
		t.Fatalf("UPDATED_NEW returned an attribute the update did not touch")
	}

	// The same condition now fails: count is 42.
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(mainTable), Key: mainKey("user#1", "profile"),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("want ConditionalCheckFailedException, got %T %v", err, err)
	}
	if ccf.ErrorCode() != "ConditionalCheckFailedException" || ccf.ErrorMessage() != "The conditional request failed" {
		t.Fatalf("ConditionalCheckFailedException: %q %q", ccf.ErrorCode(), ccf.ErrorMessage())
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Fatalf("want an HTTP 400 ResponseError, got %v", err)
	}
	if re.ServiceRequestID() == "" {
		t.Fatalf("no request id on the error")
	}

	// Projection through the builder on GetItem.
	proj, err := expression.NewBuilder().WithProjection(
		expression.NamesList(expression.Name("count"), expression.Name("inner.Label"), expression.Name("matrix[2]"))).Build()
	must(t, err, "projection Build")
	g, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(mainTable), Key: mainKey("user#1", "profile"),
		ProjectionExpression: proj.Projection(), ExpressionAttributeNames: proj.Names(),
	})
	must(t, err, "GetItem projected")
	var p struct {
		Count  int64 `dynamodbav:"count"`
		Inner  map[string]interface{}
		Matrix [][]int `dynamodbav:"matrix"`
	}
	must(t, attributevalue.UnmarshalMap(g.Item, &p), "UnmarshalMap projected")
	if len(g.Item) != 3 || p.Count != 42 || !reflect.DeepEqual(p.Inner, map[string]interface{}{"Label": "renamed"}) ||
		!reflect.DeepEqual(p.Matrix, [][]int{{9}}) {
		t.Fatalf("projected item: %d attributes, %+v", len(g.Item), p)
	}
}

func TestPutConditionAndDeleteReturningOld(t *testing.T) {
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	must(t, err, "Build")
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(mainTable), Item: mainKey("user#1", "profile"),
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("put over an existing item: want ConditionalCheckFailedException, got %v", err)
	}
	// A fresh key passes the same condition; deleting it returns what was there.
	item := mainKey("user#2", "profile")
	item["name"] = &types.AttributeValueMemberS{Value: "Grace"}
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(mainTable), Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
	})
	must(t, err, "conditional PutItem on a new key")
	del, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(mainTable), Key: mainKey("user#2", "profile"), ReturnValues: types.ReturnValueAllOld,
	})
	must(t, err, "DeleteItem")
	if n, ok := del.Attributes["name"].(*types.AttributeValueMemberS); !ok || n.Value != "Grace" {
		t.Fatalf("ALL_OLD: %#v", del.Attributes)
	}
	g, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(mainTable), Key: mainKey("user#2", "profile")})
	must(t, err, "GetItem after delete")
	if g.Item != nil {
		t.Fatalf("deleted item still there: %#v", g.Item)
	}
}

const pageItems = 60

func TestBatchWriteAndBatchGet(t *testing.T) {
	// 60 items under one partition, three batches of 20, each with a filler so that a full
	// query answer is well over the 4 KB from which responses may be compressed.
	filler := strings.Repeat("x", 120)
	for start := 0; start < pageItems; start += 20 {
		var reqs []types.WriteRequest
		for i := start; i < start+20; i++ {
			kind := "even"
			if i%2 == 1 {
				kind = "odd"
			}
			item, err := attributevalue.MarshalMap(map[string]interface{}{
				"pk": "page", "sk": fmt.Sprintf("item#%03d", i), "n": i, "kind": kind, "rank": i, "filler": filler,
			})
			must(t, err, "MarshalMap")
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{mainTable: reqs},
		})
		must(t, err, "BatchWriteItem")
		if len(out.UnprocessedItems) != 0 {
			t.Fatalf("unprocessed items: %v", out.UnprocessedItems)
		}
	}
	// A batch mixing a put and a delete.
	out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
		RequestItems: map[string][]types.WriteRequest{mainTable: {
			{PutRequest: &types.PutRequest{Item: mainKey("batch", "temp")}},
			{DeleteRequest: &types.DeleteRequest{Key: mainKey("batch", "never")}},
		}},
	})
	must(t, err, "BatchWriteItem put+delete")
	if len(out.UnprocessedItems) != 0 {
		t.Fatalf("unprocessed items: %v", out.UnprocessedItems)
	}

	proj, err := expression.NewBuilder().WithProjection(expression.NamesList(expression.Name("sk"), expression.Name("n"))).Build()
	must(t, err, "Build")
	g, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
		RequestItems: map[string]types.KeysAndAttributes{mainTable: {
			Keys: []map[string]types.AttributeValue{
				mainKey("page", "item#005"), mainKey("page", "item#042"), mainKey("page", "item#999"), mainKey("batch", "temp"),
			},
			ProjectionExpression: proj.Projection(), ExpressionAttributeNames: proj.Names(), ConsistentRead: aws.Bool(true),
		}},
	})
	must(t, err, "BatchGetItem")
	if len(g.UnprocessedKeys) != 0 {
		t.Fatalf("unprocessed keys: %v", g.UnprocessedKeys)
	}
	var rows []struct {
		SK string `dynamodbav:"sk"`
		N  *int   `dynamodbav:"n"`
	}
	must(t, attributevalue.UnmarshalListOfMaps(g.Responses[mainTable], &rows), "UnmarshalListOfMaps")
	var got []string
	for _, r := range rows {
		n := -1
		if r.N != nil {
			n = *r.N
		}
		got = append(got, fmt.Sprintf("%s=%d", r.SK, n))
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"item#005=5", "item#042=42", "temp=-1"}) {
		t.Fatalf("BatchGetItem returned %v", got)
	}
}

func TestQueryPaginator(t *testing.T) {
	kc, err := expression.NewBuilder().WithKeyCondition(
		expression.Key("pk").Equal(expression.Value("page")).And(expression.Key("sk").BeginsWith("item#"))).Build()
	must(t, err, "Build")
	p := dynamodb.NewQueryPaginator(client, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), KeyConditionExpression: kc.KeyCondition(),
		ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values(), Limit: aws.Int32(7),
	})
	pages, seen := 0, []int{}
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		must(t, err, "Query page")
		pages++
		if len(out.Items) > 7 || int(out.Count) != len(out.Items) {
			t.Fatalf("page %d: %d items, Count %d", pages, len(out.Items), out.Count)
		}
		for _, it := range out.Items {
			var r struct {
				N int `dynamodbav:"n"`
			}
			must(t, attributevalue.UnmarshalMap(it, &r), "UnmarshalMap")
			seen = append(seen, r.N)
		}
		if pages > 20 {
			t.Fatalf("paginator does not stop")
		}
	}
	// 60 items, 7 a page: eight full pages and a ninth of four, without LastEvaluatedKey.
	if pages != 9 || len(seen) != pageItems {
		t.Fatalf("%d pages, %d items", pages, len(seen))
	}
	for i, n := range seen {
		if n != i {
			t.Fatalf("item %d is n=%d: not in sort-key order", i, n)
		}
	}

	// Backwards, with a filter and a projection: the limit counts items read, not returned.
	q, err := expression.NewBuilder().
		WithKeyCondition(expression.Key("pk").Equal(expression.Value("page")).
			And(expression.Key("sk").Between(expression.Value("item#010"), expression.Value("item#029")))).
		WithFilter(expression.Name("kind").Equal(expression.Value("odd")).And(expression.Name("n").GreaterThan(expression.Value(14)))).
		WithProjection(expression.NamesList(expression.Name("n"))).Build()
	must(t, err, "Build")
	p = dynamodb.NewQueryPaginator(client, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), KeyConditionExpression: q.KeyCondition(), FilterExpression: q.Filter(),
		ProjectionExpression: q.Projection(), ExpressionAttributeNames: q.Names(), ExpressionAttributeValues: q.Values(),
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(5),
	})
	var odd []int
	scanned := int32(0)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		must(t, err, "filtered Query page")
		scanned += out.ScannedCount
		for _, it := range out.Items {
			if len(it) != 1 {
				t.Fatalf("projection returned %d attributes", len(it))
			}
			var r struct {
				N int `dynamodbav:"n"`
			}
			must(t, attributevalue.UnmarshalMap(it, &r), "UnmarshalMap")
			odd = append(odd, r.N)
		}
	}
	if !reflect.DeepEqual(odd, []int{29, 27, 25, 23, 21, 19, 17, 15}) || scanned != 20 {
		t.Fatalf("filtered query: %v, ScannedCount %d", odd, scanned)
	}

	// The GSI and the LSI answer too.
	gi, err := expression.NewBuilder().WithKeyCondition(
		expression.Key("kind").Equal(expression.Value("odd")).And(expression.Key("rank").LessThan(expression.Value(10)))).Build()
	must(t, err, "Build")
	out, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), IndexName: aws.String("by_kind"), KeyConditionExpression: gi.KeyCondition(),
		ExpressionAttributeNames: gi.Names(), ExpressionAttributeValues: gi.Values(), ScanIndexForward: aws.Bool(false),
	})
	must(t, err, "Query GSI")
	var ranks []int
	for _, it := range out.Items {
		var r struct {
			Rank int `dynamodbav:"rank"`
		}
		must(t, attributevalue.UnmarshalMap(it, &r), "UnmarshalMap")
		ranks = append(ranks, r.Rank)
	}
	if !reflect.DeepEqual(ranks, []int{9, 7, 5, 3, 1}) {
		t.Fatalf("GSI query: %v", ranks)
	}
	li, err := expression.NewBuilder().WithKeyCondition(
		expression.Key("pk").Equal(expression.Value("page")).And(expression.Key("rank").GreaterThanEqual(expression.Value(57)))).Build()
	must(t, err, "Build")
	out, err = client.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), IndexName: aws.String("by_rank"), KeyConditionExpression: li.KeyCondition(),
		ExpressionAttributeNames: li.Names(), ExpressionAttributeValues: li.Values(), Select: types.SelectCount,
	})
	must(t, err, "Query LSI count")
	if out.Count != 3 || out.Items != nil {
		t.Fatalf("LSI count: %d, items %v", out.Count, out.Items)
	}
}

func TestParallelScanPaginator(t *testing.T) {
	const segments = 3
	seen := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, segments)
	for seg := 0; seg < segments; seg++ {
		wg.Add(1)
		go func(seg int32) {
			defer wg.Done()
			p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{
				TableName: aws.String(mainTable), Segment: aws.Int32(seg), TotalSegments: aws.Int32(segments),
				Limit: aws.Int32(8), ConsistentRead: aws.Bool(true),
			})
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				if err != nil {
					errs <- fmt.Errorf("segment %d: %w", seg, err)
					return
				}
				mu.Lock()
				for _, it := range out.Items {
					k := it["pk"].(*types.AttributeValueMemberS).Value + "/" + it["sk"].(*types.AttributeValueMemberS).Value
					seen[k]++
				}
				mu.Unlock()
			}
		}(int32(seg))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// user#1/profile, batch/temp and the 60 page items, each in exactly one segment.
	if len(seen) != pageItems+2 {
		t.Fatalf("parallel scan saw %d distinct items", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", k, n)
		}
	}
	if seen["user#1/profile"] != 1 || seen["page/item#059"] != 1 {
		t.Fatalf("parallel scan missed items: %v", seen)
	}
}

func TestTransactWriteItems(t *testing.T) {
	put := mainKey("tx", "a")
	put["v"] = &types.AttributeValueMemberN{Value: "1"}
	first := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("go-v2-token-1"), TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(mainTable), Item: put}},
		{Update: &types.Update{
			TableName: aws.String(mainTable), Key: mainKey("tx", "b"),
			UpdateExpression:          aws.String("SET v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "2"}},
		}},
		{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(mainTable), Key: mainKey("user#1", "profile"),
			ConditionExpression: aws.String("attribute_exists(pk)"),
		}},
		{Delete: &types.Delete{TableName: aws.String(mainTable), Key: mainKey("batch", "temp")}},
	}}
	_, err := client.TransactWriteItems(ctx, first)
	must(t, err, "TransactWriteItems")

	// The second action's condition fails: nothing is written, and the reasons name it.
	_, err = client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: aws.String(mainTable), Key: mainKey("tx", "a"),
			UpdateExpression:          aws.String("SET v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "100"}},
		}},
		{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(mainTable), Key: mainKey("tx", "b"),
			ConditionExpression:       aws.String("v = :three"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":three": &types.AttributeValueMemberN{Value: "3"}},
		}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %T %v", err, err)
	}
	if len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "None" ||
		aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" ||
		aws.ToString(tce.CancellationReasons[1].Message) != "The conditional request failed" {
		t.Fatalf("cancellation reasons: %s", reasons(tce.CancellationReasons))
	}
	g, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		mainTable: {Keys: []map[string]types.AttributeValue{mainKey("tx", "a"), mainKey("tx", "b"), mainKey("batch", "temp")}},
	}})
	must(t, err, "BatchGetItem")
	vals := map[string]string{}
	for _, it := range g.Responses[mainTable] {
		vals[it["sk"].(*types.AttributeValueMemberS).Value] = it["v"].(*types.AttributeValueMemberN).Value
	}
	if !reflect.DeepEqual(vals, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("after the transactions: %v", vals)
	}

	// The first request again with its ClientRequestToken succeeds without writing again;
	// the token with other items is refused.
	changed := mainKey("tx", "a")
	changed["v"] = &types.AttributeValueMemberN{Value: "7"}
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(mainTable), Item: changed})
	must(t, err, "PutItem")
	_, err = client.TransactWriteItems(ctx, first)
	must(t, err, "TransactWriteItems replayed")
	a, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(mainTable), Key: mainKey("tx", "a"), ConsistentRead: aws.Bool(true)})
	must(t, err, "GetItem")
	if v := a.Item["v"].(*types.AttributeValueMemberN).Value; v != "7" {
		t.Fatalf("a replayed transaction wrote again: v=%s", v)
	}
	_, err = client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		ClientRequestToken: first.ClientRequestToken,
		TransactItems:      []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(mainTable), Item: put}}},
	})
	var ipm *types.IdempotentParameterMismatchException
	if !errors.As(err, &ipm) {
		t.Fatalf("token reused with other items: want IdempotentParameterMismatchException, got %v", err)
	}
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(mainTable), Item: put})
	must(t, err, "PutItem")
}

// TestTransactionCanceledMessage needs its own table: test_go.py runs it alone, as an expected
// failure. DynamoDB sends this exception's text under "Message" (capital M, the member's name in
// the service model), which is where this SDK reads it; quarry sends "message", so the
// typed error's Message stays empty.
func TestTransactionCanceledMessage(t *testing.T) {
	const table = "go_v2_txmsg"
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	must(t, err, "CreateTable")
	defer client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	key := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: v}}
	}
	_, err = client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(table), Item: key("a")}},
		{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(table), Key: key("b"), ConditionExpression: aws.String("attribute_exists(pk)"),
		}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 {
		t.Fatalf("want TransactionCanceledException with two reasons, got %v", err)
	}
	want := "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]"
	if tce.ErrorMessage() != want {
		t.Fatalf("TransactionCanceledException message: got %q, want %q", tce.ErrorMessage(), want)
	}
}

func reasons(rs []types.CancellationReason) string {
	var s []string
	for _, r := range rs {
		s = append(s, aws.ToString(r.Code)+":"+aws.ToString(r.Message))
	}
	return strings.Join(s, ", ")
}

// gzipRecorder is the SDK's HTTP client with a look at each raw response on the way back: it
// counts compressed and plain answers and checks x-amz-crc32 against the bytes as sent (for a
// compressed answer, the compressed bytes), independently of the SDK. With corrupt set it then
// replaces the header with a wrong value, for the SDK's own check to catch.
type gzipRecorder struct {
	inner      *awshttp.BuildableClient
	mu         sync.Mutex
	compressed int
	plain      int
	mismatches []string
	corrupt    bool
}

func (g *gzipRecorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := g.inner.Do(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	g.mu.Lock()
	defer g.mu.Unlock()
	if resp.Header.Get("Content-Encoding") == "gzip" {
		g.compressed++
	} else {
		g.plain++
	}
	if want := fmt.Sprint(crc32.ChecksumIEEE(body)); resp.Header.Get("X-Amz-Crc32") != want {
		g.mismatches = append(g.mismatches, fmt.Sprintf("%s: header %q, body %s",
			req.Header.Get("X-Amz-Target"), resp.Header.Get("X-Amz-Crc32"), want))
	}
	if g.corrupt {
		resp.Header.Set("X-Amz-Crc32", "12345")
	}
	return resp, nil
}

// warnings collects what the SDK logs: this SDK reports a checksum mismatch when it closes the
// body, as a logged warning ("failed to close HTTP response body"), not as an error of the call.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Logf(c logging.Classification, format string, v ...interface{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, string(c)+": "+fmt.Sprintf(format, v...))
}

func gzipQuery(t *testing.T, c *dynamodb.Client) *dynamodb.QueryOutput {
	t.Helper()
	out, err := c.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "page"}},
	})
	must(t, err, "Query")
	if len(out.Items) != pageItems || out.Items[59]["sk"].(*types.AttributeValueMemberS).Value != "item#059" {
		t.Fatalf("Query returned %d items", len(out.Items))
	}
	return out
}

func TestResponseChecksumWithGzip(t *testing.T) {
	rec := &gzipRecorder{inner: awshttp.NewBuildableClient()}
	logged := &warnings{}
	gz := newClient(keyID, secret, func(o *dynamodb.Options) {
		o.EnableAcceptEncodingGzip = true
		o.HTTPClient = rec
		o.Logger = logged
	})
	// A query answer of some 12 KB comes compressed; the SDK decompresses it.
	gzipQuery(t, gz)
	// A small answer stays uncompressed.
	g, err := gz.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(mainTable), Key: mainKey("tx", "a")})
	must(t, err, "gzip GetItem")
	if g.Item["v"].(*types.AttributeValueMemberN).Value != "1" {
		t.Fatalf("gzip GetItem: %#v", g.Item)
	}
	// An error answer carries a checksum too.
	_, err = gz.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("no_such_table"), Key: mainKey("a", "b")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("want ResourceNotFoundException, got %v", err)
	}
	if rec.compressed != 1 || rec.plain != 2 {
		t.Fatalf("want one gzip and two plain responses, saw %d and %d", rec.compressed, rec.plain)
	}
	if len(rec.mismatches) != 0 || len(logged.msgs) != 0 {
		t.Fatalf("checksums: %v; SDK log: %v", rec.mismatches, logged.msgs)
	}

	// The same query without gzip: plain, and still valid.
	plain := &gzipRecorder{inner: awshttp.NewBuildableClient()}
	gzipQuery(t, newClient(keyID, secret, func(o *dynamodb.Options) { o.HTTPClient = plain; o.Logger = logged }))
	if plain.compressed != 0 || plain.plain != 1 || len(plain.mismatches) != 0 || len(logged.msgs) != 0 {
		t.Fatalf("without gzip: %d gzip, %d plain, mismatches %v, log %v", plain.compressed, plain.plain,
			plain.mismatches, logged.msgs)
	}

	// The SDK's check is live on both paths: a wrong x-amz-crc32 is reported.
	for _, gzip := range []bool{true, false} {
		bad := &gzipRecorder{inner: awshttp.NewBuildableClient(), corrupt: true}
		seen := &warnings{}
		gzipQuery(t, newClient(keyID, secret, func(o *dynamodb.Options) {
			o.EnableAcceptEncodingGzip = gzip
			o.HTTPClient = bad
			o.Logger = seen
		}))
		if len(seen.msgs) != 1 || !strings.Contains(seen.msgs[0], "failed to close HTTP response body") {
			t.Fatalf("gzip=%v: a wrong x-amz-crc32 went unnoticed by the SDK: %v", gzip, seen.msgs)
		}
	}
}

func describe(t *testing.T, name string) *types.TableDescription {
	t.Helper()
	d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	must(t, err, "DescribeTable")
	return d.Table
}

func TestDescribeAndUpdateTable(t *testing.T) {
	d := describe(t, mainTable)
	// DynamoDB puts the request's region and the account in the ARN; quarry, like DynamoDB
	// Local, has neither and writes "ddblocal:000000000000". The SDK only passes it back.
	if !strings.HasPrefix(aws.ToString(d.TableArn), "arn:aws:dynamodb:") ||
		!strings.HasSuffix(aws.ToString(d.TableArn), ":table/"+mainTable) {
		t.Fatalf("TableArn %q", aws.ToString(d.TableArn))
	}
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Fatalf("BillingModeSummary %+v", d.BillingModeSummary)
	}
	if len(d.KeySchema) != 2 || aws.ToString(d.KeySchema[0].AttributeName) != "pk" || d.KeySchema[1].KeyType != types.KeyTypeRange {
		t.Fatalf("KeySchema %+v", d.KeySchema)
	}
	if d.CreationDateTime == nil || time.Since(*d.CreationDateTime) > time.Hour || time.Since(*d.CreationDateTime) < 0 {
		t.Fatalf("CreationDateTime %v", d.CreationDateTime)
	}

	// A new GSI over existing items: it backfills, then answers.
	u, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(mainTable),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("name"), AttributeType: types.ScalarAttributeTypeS},
		},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName:  aws.String("by_name"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("name"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}}},
	})
	must(t, err, "UpdateTable")
	if aws.ToString(u.TableDescription.TableName) != mainTable || len(u.TableDescription.GlobalSecondaryIndexes) != 2 {
		t.Fatalf("UpdateTable description: %+v", u.TableDescription.GlobalSecondaryIndexes)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		active := false
		for _, g := range describe(t, mainTable).GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == "by_name" && g.IndexStatus == types.IndexStatusActive {
				active = true
			}
		}
		if active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("by_name did not become ACTIVE")
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(mainTable), IndexName: aws.String("by_name"),
		KeyConditionExpression:    aws.String("#n = :n"),
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "Ada Lovelace ✓"}},
	})
	must(t, err, "Query new GSI")
	if len(out.Items) != 1 || len(out.Items[0]) != 3 || out.Items[0]["sk"].(*types.AttributeValueMemberS).Value != "profile" {
		t.Fatalf("new GSI answered %v", out.Items)
	}
}

func TestListTablesPaginator(t *testing.T) {
	names := []string{mainTable}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("go_v2_list_%d", i)
		_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:             aws.String(name),
			AttributeDefinitions:  []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeB}},
			KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)},
		})
		must(t, err, "CreateTable "+name)
		names = append(names, name)
	}
	p := dynamodb.NewListTablesPaginator(client, &dynamodb.ListTablesInput{Limit: aws.Int32(2)})
	var all []string
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		must(t, err, "ListTables page")
		pages++
		if len(out.TableNames) > 2 || pages > 10 {
			t.Fatalf("page %d: %v", pages, out.TableNames)
		}
		all = append(all, out.TableNames...)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(all, names) || pages != 3 {
		t.Fatalf("ListTables pages=%d: %v", pages, all)
	}
	for _, n := range names[:4] {
		_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		must(t, err, "DeleteTable "+n)
	}
}

func TestTimeToLiveAndTags(t *testing.T) {
	ttl, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(mainTable),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)},
	})
	must(t, err, "UpdateTimeToLive")
	if aws.ToString(ttl.TimeToLiveSpecification.AttributeName) != "expires" || !aws.ToBool(ttl.TimeToLiveSpecification.Enabled) {
		t.Fatalf("UpdateTimeToLive answered %+v", ttl.TimeToLiveSpecification)
	}
	dt, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(mainTable)})
	must(t, err, "DescribeTimeToLive")
	st := dt.TimeToLiveDescription.TimeToLiveStatus
	if aws.ToString(dt.TimeToLiveDescription.AttributeName) != "expires" ||
		(st != types.TimeToLiveStatusEnabled && st != types.TimeToLiveStatusEnabling) {
		t.Fatalf("DescribeTimeToLive: %+v", dt.TimeToLiveDescription)
	}

	arn := describe(t, mainTable).TableArn
	_, err = client.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: arn, Tags: []types.Tag{
		{Key: aws.String("team"), Value: aws.String("storage")},
		{Key: aws.String("env"), Value: aws.String("test")},
		{Key: aws.String("cost"), Value: aws.String("")},
	}})
	must(t, err, "TagResource")
	_, err = client.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"env"}})
	must(t, err, "UntagResource")
	lt, err := client.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: arn})
	must(t, err, "ListTagsOfResource")
	tags := map[string]string{}
	for _, tg := range lt.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if !reflect.DeepEqual(tags, map[string]string{"team": "storage", "cost": ""}) {
		t.Fatalf("tags: %v", tags)
	}
}

func TestWrongCredentials(t *testing.T) {
	for _, c := range []struct{ key, secret, code string }{
		{keyID, secret + "x", "InvalidSignatureException"},
		{"AKIDNOSUCHKEY0000000", secret, "UnrecognizedClientException"},
	} {
		bad := newClient(c.key, c.secret, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
		_, err := bad.ListTables(ctx, &dynamodb.ListTablesInput{})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != c.code {
			t.Fatalf("key %s: want %s, got %v", c.key, c.code, err)
		}
		if ae.ErrorMessage() == "" {
			t.Fatalf("%s without a message", c.code)
		}
		var re *awshttp.ResponseError
		if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
			t.Fatalf("%s: want HTTP 400, got %v", c.code, err)
		}
	}
}

func TestDeleteTableAndWait(t *testing.T) {
	out, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(mainTable)})
	must(t, err, "DeleteTable")
	if aws.ToString(out.TableDescription.TableName) != mainTable {
		t.Fatalf("DeleteTable described %q", aws.ToString(out.TableDescription.TableName))
	}
	w := dynamodb.NewTableNotExistsWaiter(client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 500 * time.Millisecond
	})
	must(t, w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(mainTable)}, 20*time.Second), "TableNotExistsWaiter")
	_, err = client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(mainTable)})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("DescribeTable of a deleted table: want ResourceNotFoundException, got %v", err)
	}
	l, err := client.ListTables(ctx, &dynamodb.ListTablesInput{})
	must(t, err, "ListTables")
	if len(l.TableNames) != 0 {
		t.Fatalf("tables left: %v", l.TableNames)
	}
}
