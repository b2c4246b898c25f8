// Loopback runs DynamoDB Local listening on 127.0.0.1 only: its own main
// class listens on every interface and has no option to say otherwise, so
// that any machine on the network could read and write its tables.
// scripts/install-dynamodb-local.sh compiles this file next to the jar, and
// ddblocal.Start runs it with DynamoDB Local's own arguments.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class Loopback {
	public static void main(String[] args) throws Exception {
		DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
		Field jetty = DynamoDBProxyServer.class.getDeclaredField("server");
		jetty.setAccessible(true);
		for (Connector c : ((Server) jetty.get(proxy)).getConnectors()) {
			((ServerConnector) c).setHost("127.0.0.1");
		}
		proxy.start();
	}
}
