// Command hellodb is the floor of `make bench`'s cold request as deployed:
// the smallest aws-lambda-go function behind API Gateway that reads one
// DynamoDB item, as a plain SDK client does (the system's roots, its
// connection opened on the first request), built and measured beside
// Quire's functions.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func main() {
	db := dynamodb.New(dynamodb.Options{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
				SessionToken: os.Getenv("AWS_SESSION_TOKEN")}, nil
		}),
		BaseEndpoint: aws.String(os.Getenv("DYNAMODB_ENDPOINT")),
	})
	table := os.Getenv("USERS_TABLE")
	lambda.Start(func(ctx context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &table,
			Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "hello"}},
		})
		if err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		return events.APIGatewayProxyResponse{StatusCode: 200, Body: "hello"}, nil
	})
}
