import org.apache.camel.builder.RouteBuilder;

// A Java route whose timer fires once a minute, as Camel K's cron-java case has it: it runs as a
// CronJob of a minute whose jobs log once and end.
public class CronJava extends RouteBuilder {
    @Override
    public void configure() {
        from("timer:java?period=60000")
            .setHeader("word").constant("string!")
            .setBody().simple("Magic${header.word}")
            .log("${body}");
    }
}
