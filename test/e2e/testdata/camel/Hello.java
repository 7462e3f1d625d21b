import org.apache.camel.builder.RouteBuilder;

// A Java route, compiled by the runtime, that logs four properties: from a properties
// file given with -p file:, from a ConfigMap given with --config, from a ConfigMap's entry
// given with -p configmap:, and from a Secret given with --config secret:; and one of the
// ConfigMap's properties file that interpolates another.
public class Hello extends RouteBuilder {
    @Override
    public void configure() {
        from("timer:java?period=1000")
            .setBody().simple("java says {{file.word}} and {{config.word}} and {{cm.word}} and {{secret.word}}, {{config.echo}}")
            .to("log:java");
    }
}
