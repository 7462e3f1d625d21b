// camel-k: dependency=mvn:org.apache.commons:commons-lang3:3.17.0
import org.apache.camel.builder.RouteBuilder;
import org.apache.commons.lang3.StringUtils;

public class Lang3 extends RouteBuilder {
    @Override
    public void configure() throws Exception {
        from("timer:java?period=1000").setBody(constant(StringUtils.capitalize("hello"))).to("log:info");
    }
}
