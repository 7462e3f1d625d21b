import org.apache.camel.builder.RouteBuilder;

// A Java route, compiled by the runtime, that logs two properties: one from a
// properties file given with -p file:, one from a ConfigMap given with --config.
public class Hello extends RouteBuilder {
    @Override
    public void configure() {
        from("timer:java?period=1000")
            .setBody().simple("java says {{file.word}} and {{config.word}}")
            .to("log:java");
    }
}
