// camel-k: dependency=camel:jackson trait=container.request-cpu=200m
// camel-k: property=app.name=sample trait=health.enabled=true
import org.apache.camel.builder.RouteBuilder;

public class Sample extends RouteBuilder {
    @Override
    public void configure() {
        from("timer:sample?period=5000")
            .setBody().constant("{\"app\": \"{{app.name}}\"}")
            .unmarshal().json()
            .to("log:sample");
    }
}
