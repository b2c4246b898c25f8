// Command hello is the floor of `make bench`: the smallest aws-lambda-go
// function behind API Gateway, built and measured beside Quire's functions.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200, Body: "hello"}, nil
	})
}
