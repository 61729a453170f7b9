/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.FieldVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.hibernate.HibernateTransactionManager;
import org.springframework.security.web.csrf.CsrfToken;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyRuntimeHints}: every resource the stores load is
 * registered, including scripts added later, found by listing the packages they live in;
 * every class that the library's code (the starter's and idempotency-core's, read from
 * their class files) names in a string is registered for reflection, so that a presence
 * check added later without its hint fails here; and each method the library calls
 * reflectively is registered for invocation.
 *
 * @author Idempotency contributors
 */
class IdempotencyRuntimeHintsTests {

	// a class name: lower-case package segments, then a class whose name is not all
	// capitals (dev.idempotency.spring.web.IdempotencyFilter.CALL names an attribute)
	private static final Pattern CLASS_NAME = Pattern
		.compile("(?:[a-z_][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*[a-z][A-Za-z0-9_$]*");

	// named by the library only to compare a class's name with it, never loaded
	private static final Set<String> COMPARED_BY_NAME = Set.of("org.springframework.kafka.support.KafkaNull",
			"org.springframework.security.authentication.AnonymousAuthenticationToken");

	private final RuntimeHints hints = new RuntimeHints();

	IdempotencyRuntimeHintsTests() {
		new IdempotencyRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void everyLuaScriptAndMigrationScriptIsRegistered() throws IOException {
		List<String> scripts = resources("dev/idempotency/spring/store/redis/*.lua");
		List<String> postgresql = resources("dev/idempotency/spring/store/jdbc/migration/postgresql/*.sql");
		List<String> mariadb = resources("dev/idempotency/spring/store/jdbc/migration/mariadb/*.sql");
		assertThat(scripts).contains("dev/idempotency/spring/store/redis/acquire.lua",
				"dev/idempotency/spring/store/redis/complete.lua");
		assertThat(postgresql)
			.contains("dev/idempotency/spring/store/jdbc/migration/postgresql/V1__create_idempotency_record.sql");
		assertThat(mariadb)
			.contains("dev/idempotency/spring/store/jdbc/migration/mariadb/V1__create_idempotency_record.sql");
		for (String resource : concat(scripts, postgresql, mariadb)) {
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(this.hints);
		}
		assertThat(RuntimeHintsPredicates.resource().forResource("dev/idempotency/spring/store/redis/other.txt"))
			.rejects(this.hints);
	}

	@Test
	void everyResourceFolderOfTheStoresIsCovered() throws IOException {
		// a folder of scripts added later (a new database) needs a pattern of its own;
		// the resources of the starter's jar only, not those of its tests
		String starter = IdempotencyRuntimeHints.class.getProtectionDomain().getCodeSource().getLocation().toString();
		List<String> all = new ArrayList<>();
		for (Resource resource : new PathMatchingResourcePatternResolver()
			.getResources("classpath*:dev/idempotency/spring/store/**/*.*")) {
			String url = resource.getURL().toString();
			if (!url.endsWith(".class") && url.contains(starter.replaceFirst("^file:", ""))) {
				all.add(url.substring(url.indexOf("dev/idempotency/spring/store/")));
			}
		}
		assertThat(all).isNotEmpty();
		for (String resource : all) {
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(this.hints);
		}
	}

	@Test
	void theAutoConfigurationBringsTheHints() {
		ImportRuntimeHints imported = IdempotencyAutoConfiguration.class.getAnnotation(ImportRuntimeHints.class);
		assertThat(imported).isNotNull();
		assertThat(imported.value()).containsExactly(IdempotencyRuntimeHints.class);
	}

	@Test
	void listenerCompositesCanBeProxiedAndCallTheListeners() {
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(IdempotencyListener.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.proxies().forInterfaces(TieredStoreListener.class)).accepts(this.hints);
		for (Class<?> listener : List.of(IdempotencyListener.class, TieredStoreListener.class)) {
			for (Method method : listener.getMethods()) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(method)).as(method.toString())
					.accepts(this.hints);
			}
		}
	}

	@Test
	void everyClassTheLibraryNamesInAStringIsRegistered() {
		Set<String> named = classNamesInLibraryCode();
		// the scan finds the presence checks: it would find a new one too
		assertThat(named).contains("tools.jackson.core.json.JsonFactory", "org.flywaydb.core.Flyway",
				"org.springframework.transaction.PlatformTransactionManager");
		for (String name : named) {
			if (!COMPARED_BY_NAME.contains(name)) {
				assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(name)))
					.as("%s, named in the library's code, registered for reflection", name)
					.accepts(this.hints);
			}
		}
		// and nothing is registered that the code no longer names
		assertThat(named).containsAll(IdempotencyRuntimeHints.CLASSES_LOOKED_UP)
			.containsAll(IdempotencyRuntimeHints.CSRF_TOKENS)
			.contains(IdempotencyRuntimeHints.KAFKA_BYTES, IdempotencyRuntimeHints.HIKARI_DATA_SOURCE)
			.containsAll(COMPARED_BY_NAME);
	}

	@Test
	void theMethodsCalledReflectivelyOnClassesKnownByNameAreRegistered() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(CsrfToken.class, "getParameterName"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(org.springframework.security.web.server.csrf.CsrfToken.class, "getParameterName"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Bytes.class, "get")).accepts(this.hints);
	}

	@Test
	void theBeanPropertiesReadThroughABeanWrapperAreRegistered() {
		// what BeanWrapperImpl invokes: the read method of each property, on the class
		// that declares it
		assertReadable(JdbcTransactionManager.class, "dataSource");
		assertReadable(DataSourceTransactionManager.class, "dataSource");
		assertReadable(JpaTransactionManager.class, "dataSource");
		assertReadable(HibernateTransactionManager.class, "dataSource");
		assertReadable(HikariDataSource.class, "jdbcUrl");
		assertReadable(HikariDataSource.class, "connectionTimeout");
		assertReadable(HikariDataSource.class, "dataSourceProperties");
		assertThat(IdempotencyRuntimeHints.HIKARI_CONFIG).isEqualTo(HikariConfig.class.getName());
	}

	private void assertReadable(Class<?> type, String property) {
		assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getName()).accepts(this.hints);
		Method getter = new BeanWrapperImpl(type).getPropertyDescriptor(property).getReadMethod();
		assertThat(getter).as("%s.%s", type.getName(), property).isNotNull();
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(getter)).as(getter.toString())
			.accepts(this.hints);
	}

	// every string constant of the starter's and idempotency-core's classes (but the
	// hints' own) that names a class
	private static Set<String> classNamesInLibraryCode() {
		Set<String> names = new TreeSet<>();
		for (Class<?> anchor : List.of(IdempotencyRuntimeHints.class, Sha256RequestFingerprinter.class)) {
			forEachClassFile(anchor,
					(bytes) -> new ClassReader(bytes).accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {

						private boolean skip;

						@Override
						public void visit(int version, int access, String name, String signature, String superName,
								String[] interfaces) {
							this.skip = name.equals(IdempotencyRuntimeHints.class.getName().replace('.', '/'));
						}

						@Override
						public FieldVisitor visitField(int access, String name, String descriptor, String signature,
								Object value) {
							add(value);
							return null;
						}

						@Override
						public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
								String[] exceptions) {
							return new MethodVisitor(SpringAsmInfo.ASM_VERSION) {

								@Override
								public void visitLdcInsn(Object value) {
									add(value);
								}

							};
						}

						private void add(Object value) {
							if (!this.skip && value instanceof String text && CLASS_NAME.matcher(text).matches()) {
								names.add(text);
							}
						}

					}, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES));
		}
		return names;
	}

	// the class files of the directory or jar an anchor class was loaded from
	private static void forEachClassFile(Class<?> anchor, ClassFileConsumer consumer) {
		try {
			Path location = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
			if (Files.isDirectory(location)) {
				readClassFiles(location, consumer);
			}
			else {
				try (FileSystem jar = FileSystems.newFileSystem(location)) {
					readClassFiles(jar.getPath("/"), consumer);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void readClassFiles(Path root, ClassFileConsumer consumer) throws IOException {
		try (Stream<Path> files = Files.walk(root)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".class")).toList()) {
				try (InputStream in = Files.newInputStream(file)) {
					consumer.accept(in.readAllBytes());
				}
			}
		}
	}

	@SafeVarargs
	private static List<String> concat(List<String>... lists) {
		return Arrays.stream(lists).flatMap(List::stream).toList();
	}

	private static List<String> resources(String pattern) throws IOException {
		Resource[] found = new PathMatchingResourcePatternResolver().getResources("classpath*:" + pattern);
		String base = pattern.substring(0, pattern.lastIndexOf('/') + 1);
		return Arrays.stream(found).map((resource) -> base + resource.getFilename()).toList();
	}

	@FunctionalInterface
	private interface ClassFileConsumer {

		void accept(byte[] bytes);

	}

}
